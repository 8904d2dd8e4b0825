"""Read-only views the framework hands to plugins: the cycle's snapshot and object stores."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from asched.framework.events import EventResource
from asched.framework.nodeinfo import NodeInfo

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class SnapshotLister(Protocol):
    """The immutable view of nodes for one scheduling cycle."""

    def node_infos(self) -> Sequence[NodeInfo]: ...

    def get(self, node_name: str) -> NodeInfo | None: ...

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]: ...

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]: ...

    def num_nodes(self) -> int: ...


class ObjectStore(Protocol[T_co]):
    """An informer's cache of one resource, keyed `namespace/name` (or `name`)."""

    def get(self, key: str) -> T_co | None: ...

    def list(self) -> Sequence[T_co]: ...

    def in_namespace(self, namespace: str) -> Mapping[str, T_co]:
        """The objects of one namespace by key: a namespaced lister's List()."""
        ...

    def has_synced(self) -> bool: ...

    def add_listener(self, listener: Callable[[T_co | None, T_co | None], None]) -> None:
        """Call `listener(old, new)` after every later change to the store: (None, obj)
        for an add, (old, obj) for an update, (obj, None) for a delete (client-go's
        AddEventHandler). Synchronous, on the event loop, inside the write: the listener
        must be quick and must not write to the store; what the store held before is the
        caller's to read with `list()`."""
        ...


@dataclass(frozen=True)
class InformerRequest(Generic[T]):
    """A resource a plugin needs watched, and how to decode it.

    The scheduler starts one informer per distinct `resource`, waits for it to sync before
    scheduling, and reports its changes to the queue as `event_resource` events.
    `key` names the stored object (default: namespace/name).
    """

    resource: str  # e.g. "podgroups.scheduling.x-k8s.io/v1alpha1"
    list_path: str  # e.g. "/apis/scheduling.x-k8s.io/v1alpha1/podgroups"
    decode: Callable[[dict[str, Any]], T]
    event_resource: EventResource
    # A missing CRD is not an error for optional resources: the store stays empty.
    optional: bool = False
