"""DynamicResources: DRA (resource.k8s.io/v1) device allocation for pods with resourceClaims."""

from asched.plugins.dynamicresources.args import DynamicResourcesArgs
from asched.plugins.dynamicresources.plugin import NAME, SPEC, DynamicResources

__all__ = ["NAME", "SPEC", "DynamicResources", "DynamicResourcesArgs"]
