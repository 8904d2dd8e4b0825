"""DynamicResources: DRA (resource.k8s.io/v1) device allocation for pods with resourceClaims."""

from asched.plugins.dynamicresources.plugin import (
    NAME,
    SPEC,
    DynamicResources,
    DynamicResourcesArgs,
)

__all__ = ["NAME", "SPEC", "DynamicResources", "DynamicResourcesArgs"]
