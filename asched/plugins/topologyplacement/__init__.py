"""TopologyPlacementGenerator: one placement per topology domain of a pod group."""

from asched.plugins.topologyplacement.topology_placement import (
    NAME,
    SPEC,
    TopologyPlacementGenerator,
)

__all__ = ["NAME", "SPEC", "TopologyPlacementGenerator"]
