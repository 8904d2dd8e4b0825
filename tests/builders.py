"""The suite's builders, which ship in the SDK (asched.testing.builders) for plugin authors;
re-exported so `from tests.builders import make_pod` keeps working."""

from asched.testing.builders import (
    CompositePodGroupBuilder,
    NativePodGroupBuilder,
    NodeBuilder,
    PodBuilder,
    PodGroupBuilder,
    make_composite_pod_group,
    make_native_pod_group,
    make_node,
    make_pod,
    make_pod_group,
)

__all__ = [
    "CompositePodGroupBuilder",
    "NativePodGroupBuilder",
    "NodeBuilder",
    "PodBuilder",
    "PodGroupBuilder",
    "make_composite_pod_group",
    "make_native_pod_group",
    "make_node",
    "make_pod",
    "make_pod_group",
]
