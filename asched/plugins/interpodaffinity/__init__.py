"""InterPodAffinity: pod affinity and anti-affinity between the pods of the cluster.

The plugin module shape: NAME, Args, the plugin class, and SPEC for the registry.
"""

from asched.framework.registry import PluginSpec
from asched.plugins.interpodaffinity.args import Args
from asched.plugins.interpodaffinity.filtering import NAME
from asched.plugins.interpodaffinity.plugin import InterPodAffinity

SPEC = PluginSpec(NAME, InterPodAffinity, Args)

__all__ = ["NAME", "SPEC", "Args", "InterPodAffinity"]
