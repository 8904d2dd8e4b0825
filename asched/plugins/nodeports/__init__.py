"""NodePorts: requested host ports must be free on the node."""

from asched.plugins.nodeports.node_ports import ERR_REASON, NAME, SPEC, NodePorts

__all__ = ["ERR_REASON", "NAME", "SPEC", "NodePorts"]
