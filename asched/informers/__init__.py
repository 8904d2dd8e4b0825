"""List + watch into typed caches: the scheduler's view of the cluster.

Raw watch lines are decoded once with orjson into lean typed objects (asched.api); the
Store holds them and an EventHandler hears about every change, in order.
"""

from asched.informers.backoff import Backoff
from asched.informers.handler import DecodeErrorHandler, EventHandler
from asched.informers.informer import NON_TERMINAL_PODS, Informer, meta_key
from asched.informers.store import Store

__all__ = [
    "NON_TERMINAL_PODS",
    "Backoff",
    "DecodeErrorHandler",
    "EventHandler",
    "Informer",
    "Store",
    "meta_key",
]
