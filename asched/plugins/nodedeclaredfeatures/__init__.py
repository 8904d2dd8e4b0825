"""NodeDeclaredFeatures: pods that need a node feature go to nodes declaring it."""

from asched.plugins.nodedeclaredfeatures.node_declared_features import (
    ERR_REASON_UNSATISFIED,
    NAME,
    SPEC,
    NodeDeclaredFeatures,
)

__all__ = ["ERR_REASON_UNSATISFIED", "NAME", "SPEC", "NodeDeclaredFeatures"]
