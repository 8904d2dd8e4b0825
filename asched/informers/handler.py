"""What an informer tells its owner: adds, updates and deletes of typed objects.

Handlers are called synchronously on the event loop, one event at a time, in the order the
API server produced them; they must not block or await. The objects they receive are
fresh per event and also live in the informer's store, so handlers must not mutate them.
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

from asched.api import DecodeError

T_contra = TypeVar("T_contra", contravariant=True)


class EventHandler(Protocol[T_contra]):
    def on_add(self, obj: T_contra) -> None: ...

    def on_update(self, old: T_contra, new: T_contra) -> None: ...

    def on_delete(self, obj: T_contra) -> None: ...


@runtime_checkable
class DecodeErrorHandler(Protocol):
    """Optional: told about each object that could not be decoded (and was skipped)."""

    def on_decode_error(self, raw_key: str, error: DecodeError) -> None: ...
