"""Kubernetes' protobuf wire format for the objects asched writes on every pod.

client-go speaks `application/vnd.kubernetes.protobuf` to kube-apiserver for built-in
kinds, and kube-scheduler's client is configured that way (clientConnection.contentType):
its Bindings and Events reach the API server as protobuf, which the server decodes without
the JSON path's reflection and strict-field pass. asched's per-pod writes are the same two
objects, so RestClient encodes them here when the configured content type is protobuf.

`encode(body)` takes the JSON-shaped dict a caller would otherwise send and returns the
protobuf request body, or None when the kind has no schema here or the dict holds a field
the schema does not know: the caller then sends JSON, so nothing is ever dropped (and
custom resources, which the API server serves only as JSON, always go as JSON).

The body is apimachinery's runtime.Unknown after the 4-byte magic `k8s\\0`
(k8s.io/apimachinery/pkg/runtime/serializer/protobuf: Serializer.Encode), with the
object's own message in `raw`. Field numbers are those of k8s.io/api's generated.proto
(core/v1 Binding and ObjectReference, events/v1 Event and EventSeries) and apimachinery's
meta/v1 (ObjectMeta, MicroTime, Status). Only present fields are written; a proto2 reader
takes an absent optional field as its zero value, as Go's decoder does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

_VARINT = 0
_LEN = 2


class DecodeError(ValueError):
    """The bytes are not a protobuf-encoded Kubernetes object."""


class _Unencodable(Exception):
    """A value the schema cannot represent: the body goes as JSON instead."""


# -- writing ---------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    if 0 <= value < _SMALL_LIMIT:
        return _SMALL[value]
    if value < 0:
        value += 1 << 64  # int64 negatives are ten-byte two's-complement varints
    # Fourteen bits (two seven-bit groups, both continued) a step, the last from the
    # table: a Time's nanos take two steps where seven-bit ones took four.
    out = b""
    while value >= _SMALL_LIMIT:
        low = value & 0x3FFF
        out += bytes(((low & 0x7F) | 0x80, (low >> 7) | 0x80))
        value >>= 14
    return out + _SMALL[value]


# Field keys and most lengths are below 2**14: their varints are looked up, not built.
_SMALL_LIMIT = 1 << 14
_SMALL: list[bytes] = [
    bytes((v,)) if v < 0x80 else bytes(((v & 0x7F) | 0x80, v >> 7)) for v in range(_SMALL_LIMIT)
]


def _length(payload: bytes) -> bytes:
    n = len(payload)
    return _SMALL[n] if n < _SMALL_LIMIT else _varint(n)


# A field encoder turns one JSON value into the bytes of that field, given the field's
# key (its number and wire type as a varint, computed once per schema: a per-pod Event
# has twenty-odd fields, and rebuilding each key was a third of its encoding time).
FieldEncoder = Callable[[bytes, Any], bytes]


@dataclass(frozen=True, slots=True)
class _Field:
    """How one JSON value is written: its wire type and its encoder."""

    wire_type: int
    encode: FieldEncoder


def _string_field(key: bytes, value: Any) -> bytes:
    if type(value) is not str and not isinstance(value, str):
        raise _Unencodable(value)
    data = value.encode()
    n = len(data)
    return key + (_SMALL[n] if n < _SMALL_LIMIT else _varint(n)) + data


def _integer_field(key: bytes, value: Any) -> bytes:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Unencodable(value)
    return key + _varint(value)


_string = _Field(_LEN, _string_field)
_integer = _Field(_VARINT, _integer_field)
# The keys of fields 1 and 2 of the small messages built by hand below.
_KEY1_VARINT, _KEY2_VARINT = _varint(1 << 3 | _VARINT), _varint(2 << 3 | _VARINT)
_KEY1_LEN, _KEY2_LEN = _varint(1 << 3 | _LEN), _varint(2 << 3 | _LEN)


def _time_field(key: bytes, value: Any) -> bytes:
    """meta/v1 Time or MicroTime {seconds, nanos} from their RFC 3339 JSON form."""
    if not isinstance(value, str):
        raise _Unencodable(value)
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise _Unencodable(value) from None
    if stamp.tzinfo is None:
        raise _Unencodable(value)
    epoch = stamp.timestamp()
    payload = _seconds(int(epoch // 1))
    nanos = stamp.microsecond * 1000
    if nanos:
        payload += _KEY2_VARINT + _varint(nanos)
    return key + _length(payload) + payload


@functools.lru_cache(maxsize=64)
def _seconds(seconds: int) -> bytes:
    """A Time's seconds field. Kept: the Events of one second share it, and its
    five-byte varint was the costliest part of an Event's eventTime."""
    return _KEY1_VARINT + _varint(seconds)


def _string_map_field(key: bytes, value: Any) -> bytes:
    """map<string, string>: one entry message {key = 1, value = 2} per pair."""
    if type(value) is not dict and not isinstance(value, Mapping):
        raise _Unencodable(value)
    entries = []
    for k, v in value.items():
        entry = _string_field(_KEY1_LEN, k) + _string_field(_KEY2_LEN, v)
        entries.append(key + _length(entry) + entry)
    return b"".join(entries)


_time = _Field(_LEN, _time_field)
_string_map = _Field(_LEN, _string_map_field)


# How many key layouts one schema keeps a plan for: the objects asched sends are built
# by a few call sites, each with one layout; anything beyond is encoded without keeping one.
_MAX_PLANS = 32

# One field of an encoding plan: (JSON key, field key bytes, encoder); no encoder for a
# string field, which the plan's loop writes itself (most fields are strings, and a call
# per field was a third of an Event's encoding).
_Planned = tuple[str, bytes, FieldEncoder | None]


@dataclass(frozen=True, slots=True)
class _Schema:
    """A message's fields by JSON key: (field number, field key bytes, encoder).

    Fields are written in field-number order, the order Go's marshaller writes them
    (readers accept any order, but the same bytes as client-go's are easier to compare).
    `plans` keeps, per layout of a JSON object's keys (their insertion order), the fields
    to write in that order, or None when a key is one the schema cannot say: the
    objects of one call site share a layout, so after the first each is encoded without
    looking at the schema's absent fields or checking its keys again (an Event has
    eleven fields; the lookups were most of its encoding time). `skip` names keys that
    are written elsewhere (apiVersion and kind, in the envelope)."""

    fields: Mapping[str, tuple[int, bytes, FieldEncoder]]
    skip: frozenset[str]
    plans: dict[tuple[str, ...], tuple[_Planned, ...] | None]

    @classmethod
    def of(
        cls, fields: Mapping[str, tuple[int, _Field]], skip: frozenset[str] = frozenset()
    ) -> _Schema:
        return cls(
            {k: (n, _varint(n << 3 | f.wire_type), f.encode) for k, (n, f) in fields.items()},
            skip,
            {},
        )

    def encode(self, doc: Any) -> bytes:
        if type(doc) is not dict and not isinstance(doc, Mapping):
            raise _Unencodable(doc)
        layout = tuple(doc)
        plans = self.plans
        if layout in plans:
            plan = plans[layout]
        else:
            plan = self._plan(layout)
            if len(plans) < _MAX_PLANS:
                plans[layout] = plan
        if plan is None:
            raise _Unencodable(doc)
        parts: list[bytes] = []
        append = parts.append
        for name, key, encoder in plan:
            value = doc[name]
            if value is None:  # JSON null is the absent optional field
                continue
            if encoder is not None:
                append(encoder(key, value))
                continue
            # _string_field, inline.
            if type(value) is not str and not isinstance(value, str):
                raise _Unencodable(value)
            data = value.encode()
            n = len(data)
            append(key)
            append(_SMALL[n] if n < _SMALL_LIMIT else _varint(n))
            append(data)
        return b"".join(parts)

    def _plan(self, layout: tuple[str, ...]) -> tuple[_Planned, ...] | None:
        """The fields to write for objects with these keys, or None if one is unknown."""
        fields, skip = self.fields, self.skip
        present = []
        for name in layout:
            field = fields.get(name)
            if field is not None:
                number, key, encoder = field
                present.append((number, name, key, encoder))
            elif name not in skip:
                return None
        present.sort(key=lambda f: f[0])
        return tuple(
            (name, key, None if encoder is _string_field else encoder)
            for _, name, key, encoder in present
        )


def _message(fields: Mapping[str, tuple[int, _Field]]) -> _Field:
    schema = _Schema.of(fields)

    def encode_field(key: bytes, value: Any) -> bytes:
        payload = schema.encode(value)
        return key + _length(payload) + payload

    return _Field(_LEN, encode_field)


_OBJECT_META = _message(
    {
        "name": (1, _string),
        "generateName": (2, _string),
        "namespace": (3, _string),
        "uid": (5, _string),
        "resourceVersion": (6, _string),
        "labels": (11, _string_map),
        "annotations": (12, _string_map),
    }
)
_OBJECT_REFERENCE = _message(
    {
        "kind": (1, _string),
        "namespace": (2, _string),
        "name": (3, _string),
        "uid": (4, _string),
        "apiVersion": (5, _string),
        "resourceVersion": (6, _string),
        "fieldPath": (7, _string),
    }
)
_EVENT_SERIES = _message({"count": (1, _integer), "lastObservedTime": (2, _time)})

_TYPE_META = frozenset({"apiVersion", "kind"})
# (apiVersion, kind) -> the schema of the object's fields other than apiVersion and kind.
_SCHEMAS: dict[tuple[str, str], _Schema] = {
    ("v1", "Binding"): _Schema.of(
        {"metadata": (1, _OBJECT_META), "target": (2, _OBJECT_REFERENCE)}, _TYPE_META
    ),
    ("events.k8s.io/v1", "Event"): _Schema.of(
        {
            "metadata": (1, _OBJECT_META),
            "eventTime": (2, _time),
            "series": (3, _EVENT_SERIES),
            "reportingController": (4, _string),
            "reportingInstance": (5, _string),
            "action": (6, _string),
            "reason": (7, _string),
            "regarding": (8, _OBJECT_REFERENCE),
            "related": (9, _OBJECT_REFERENCE),
            "note": (10, _string),
            "type": (11, _string),
        },
        _TYPE_META,
    ),
}


def _envelope_head(api_version: str, kind: str) -> bytes:
    """What precedes the object's own message in its runtime.Unknown: the magic, the
    TypeMeta field, and the key of the raw field."""
    type_meta = _string_field(_KEY1_LEN, api_version) + _string_field(_KEY2_LEN, kind)
    return MAGIC + _KEY1_LEN + _length(type_meta) + type_meta + _KEY2_LEN


# The same for every object of a kind: built once per schema.
_HEADS = {type_meta: _envelope_head(*type_meta) for type_meta in _SCHEMAS}


def encode(body: Mapping[str, Any]) -> bytes | None:
    """The protobuf request body for *body*, or None if it must go as JSON."""
    api_version = body.get("apiVersion")
    kind = body.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    schema = _SCHEMAS.get((api_version, kind))
    if schema is None:
        return None
    try:
        raw = schema.encode(body)
    except _Unencodable:
        return None
    return _HEADS[api_version, kind] + _length(raw) + raw


# -- reading a failure's Status --------------------------------------------------------


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise DecodeError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def read_fields(data: bytes) -> dict[int, bytes | int]:
    """The last value of each field of one message (varints as ints, the rest as bytes)."""
    out: dict[int, bytes | int] = {}
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        field, wire_type = key >> 3, key & 7
        if wire_type == _VARINT:
            out[field], pos = _read_varint(data, pos)
        elif wire_type == _LEN:
            size, pos = _read_varint(data, pos)
            if pos + size > len(data):
                raise DecodeError("truncated field")
            out[field] = data[pos : pos + size]
            pos += size
        elif wire_type in (1, 5):  # fixed64, fixed32: no Kubernetes field uses them
            pos += 8 if wire_type == 1 else 4
        else:
            raise DecodeError(f"unsupported wire type {wire_type}")
    if pos != len(data):
        raise DecodeError("truncated message")
    return out


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw message) of a protobuf-encoded object."""
    if not body.startswith(MAGIC):
        raise DecodeError("no protobuf magic")
    unknown = read_fields(body[len(MAGIC) :])
    type_meta, raw = unknown.get(1, b""), unknown.get(2, b"")
    if not isinstance(type_meta, bytes) or not isinstance(raw, bytes):
        raise DecodeError("malformed envelope")
    meta = read_fields(type_meta)
    return _text(meta, 1), _text(meta, 2), raw


def _text(doc: Mapping[int, bytes | int], field: int) -> str:
    value = doc.get(field, b"")
    return value.decode(errors="replace") if isinstance(value, bytes) else ""


@dataclass(frozen=True, slots=True)
class StatusFields:
    """The part of a meta/v1 Status an ApiError carries."""

    status: str
    message: str
    reason: str
    code: int


def decode_status(body: bytes) -> StatusFields | None:
    """The meta/v1 Status in a protobuf answer; None if the answer is another kind."""
    _, kind, raw = unwrap(body)
    if kind != "Status":
        return None
    doc = read_fields(raw)
    code = doc.get(6, 0)
    return StatusFields(
        _text(doc, 2), _text(doc, 3), _text(doc, 4), code if isinstance(code, int) else 0
    )
