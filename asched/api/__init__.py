"""Lean, typed Kubernetes objects decoded once from raw JSON.

Everything past the decoding boundary (informers) works with these slotted dataclasses,
never with untyped dicts or generated client models: they hold only what the scheduler
reads, with requests, tolerations and selectors parsed once per object version.
"""

from asched.api.errors import DecodeError
from asched.api.node import Node, Taint, decode_node
from asched.api.pod import Pod, Toleration, bound_to, decode_pod
from asched.api.quantity import QuantityError, parse_cpu_milli, parse_quantity
from asched.api.resources import Resource

__all__ = [
    "DecodeError",
    "Node",
    "Pod",
    "QuantityError",
    "Resource",
    "Taint",
    "Toleration",
    "bound_to",
    "decode_node",
    "decode_pod",
    "parse_cpu_milli",
    "parse_quantity",
]
