"""An assume cache over an informer store (kube-scheduler util/assumecache).

Reserve writes what PreBind is about to send (a PV with its claimRef, a PVC with the
selected-node annotation) into this cache, so the next pod's cycle sees the PV as taken
before the API server has heard of it: two pods never take one PV. An assumed object
hides the informer's copy until the informer delivers a different version (the API
write, or someone else's change, landed) or Unreserve restores it.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from asched.framework.listers import ObjectStore


class _Versioned(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def resource_version(self) -> str: ...


V = TypeVar("V", bound=_Versioned)


class AssumeCache(Generic[V]):
    def __init__(self, store: ObjectStore[V]) -> None:
        self._store = store
        # key -> (assumed object, resourceVersion of the informer copy it was based on)
        self._assumed: dict[str, tuple[V, str]] = {}

    def _current(self, key: str, stored: V | None) -> V | None:
        entry = self._assumed.get(key)
        if entry is None:
            return stored
        assumed, base = entry
        if stored is None or stored.resource_version != base:
            # The informer moved on: its copy is the truth now (AssumeCache.update).
            del self._assumed[key]
            return stored
        return assumed

    def get(self, key: str) -> V | None:
        return self._current(key, self._store.get(key))

    def list(self) -> list[V]:
        out = []
        for obj in self._store.list():
            cur = self._current(obj.key, obj)
            if cur is not None:
                out.append(cur)
        return out

    def assume(self, obj: V) -> None:
        """Hide the informer's copy of `obj.key` behind `obj` (AssumeCache.Assume)."""
        stored = self._store.get(obj.key)
        if stored is None:
            return
        self._assumed[obj.key] = (obj, stored.resource_version)

    def restore(self, key: str) -> None:
        """Drop an assumption (AssumeCache.Restore); idempotent."""
        self._assumed.pop(key, None)

    def is_assumed(self, key: str) -> bool:
        return self.get(key) is not None and key in self._assumed
