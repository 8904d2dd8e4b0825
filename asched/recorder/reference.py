"""What an Event is about (its regarding object) and the API's limits on an Event's fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asched.api import Pod

NORMAL = "Normal"
WARNING = "Warning"

# events.k8s.io/v1 validation limits (pkg/apis/core/validation/events.go).
NOTE_LENGTH_LIMIT = 1024
FIELD_LENGTH_LIMIT = 128
NAME_LENGTH_LIMIT = 253


@dataclass(slots=True, frozen=True)
class ObjectReference:
    """What an Event is about (core/v1 ObjectReference, the fields Events use)."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""

    def to_json(self) -> dict[str, str]:
        ref = {"apiVersion": self.api_version, "kind": self.kind, "name": self.name}
        if self.namespace:
            ref["namespace"] = self.namespace
        if self.uid:
            ref["uid"] = self.uid
        if self.resource_version:
            ref["resourceVersion"] = self.resource_version
        return ref


def object_reference(obj: Any) -> ObjectReference:
    """A reference to a Pod, an ObjectReference, or any object exposing kind, namespace,
    name, uid and api_version (pod groups); raises TypeError for anything else."""
    if isinstance(obj, ObjectReference):
        return obj
    if isinstance(obj, Pod):
        return ObjectReference("v1", "Pod", obj.namespace, obj.name, obj.uid, obj.resource_version)
    try:
        return ObjectReference(
            api_version=str(obj.api_version),
            kind=str(obj.kind),
            namespace=str(obj.namespace),
            name=str(obj.name),
            uid=str(obj.uid),
            resource_version=str(getattr(obj, "resource_version", "")),
        )
    except AttributeError as err:
        raise TypeError(f"cannot reference {type(obj).__name__} in an Event: {err}") from None


def truncate_note(message: str) -> str:
    """Cut a message to the API's 1024-byte note limit, as kube-scheduler's truncateMessage."""
    raw = message.encode()
    if len(raw) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    cut = raw[: NOTE_LENGTH_LIMIT - len(suffix)].decode(errors="ignore")
    return cut + suffix
