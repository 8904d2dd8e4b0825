"""PodTopologySpread: even spreading of matching pods over topology domains.

The plugin module shape: NAME, Args, the plugin class, and SPEC for the registry.
"""

from asched.framework.registry import PluginSpec
from asched.plugins.podtopologyspread.args import Args
from asched.plugins.podtopologyspread.constraints import NAME
from asched.plugins.podtopologyspread.plugin import PodTopologySpread

SPEC = PluginSpec(NAME, PodTopologySpread, Args)

__all__ = ["NAME", "SPEC", "Args", "PodTopologySpread"]
