"""NodeName: a pod with spec.nodeName fits only that node."""

from asched.plugins.nodename.node_name import ERR_REASON, NAME, SPEC, NodeName

__all__ = ["ERR_REASON", "NAME", "SPEC", "NodeName"]
