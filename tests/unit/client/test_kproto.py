"""kproto: asched's protobuf encoding of Bindings and Events against Go's own bytes.

GO_BINDING and GO_EVENT were produced by client-go v0.37.2's protobuf serializer
(`protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)` wrapped in
`scheme.Codecs.EncoderForVersion`) from the objects written out in JSON form beside them.
Go writes every non-pointer field, zero values included; asched leaves absent fields out,
which a proto2 reader takes as the same zero values. The tests therefore compare the two
encodings as decoded messages with zero values dropped, not byte for byte.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asched.client import kproto
from asched.client.status import error_from_response

GO_BINDING = bytes.fromhex(
    "6b3873000a0d0a027631120742696e64696e6712360a180a017012001a026e7322002a057569642d3132"
    "0038004200121a0a044e6f646512001a066e6f64652d6122002a02763132003a001a002200"
)
BINDING = {
    "apiVersion": "v1",
    "kind": "Binding",
    "metadata": {"name": "p", "namespace": "ns", "uid": "uid-1"},
    "target": {"apiVersion": "v1", "kind": "Node", "name": "node-a"},
}

GO_EVENT = bytes.fromhex(
    "6b3873000a190a106576656e74732e6b38732e696f2f763112054576656e7412c5010a170a05702e3138"
    "6112001a026e7322002a00320038004200120b088bc5cdd806108094ef3a1a100802120c088cc5cdd806"
    "1080dea4a90222066173636865642a086173636865642d68320a5363686564756c696e673a104661696c"
    "65645363686564756c696e6742180a03506f6412026e731a01702201752a0276313201373a00522c302f"
    "31206e6f6465732061726520617661696c61626c653a203120496e73756666696369656e74206370752e"
    "5a075761726e696e6762040a0012006a00720078001a002200"
)
EVENT = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "p.18a", "namespace": "ns"},
    "eventTime": "2026-12-05T01:02:03.123456Z",
    "series": {"count": 2, "lastObservedTime": "2026-12-05T01:02:04.623456Z"},
    "reportingController": "asched",
    "reportingInstance": "asched-h",
    "action": "Scheduling",
    "reason": "FailedScheduling",
    "regarding": {
        "kind": "Pod",
        "namespace": "ns",
        "name": "p",
        "uid": "u",
        "apiVersion": "v1",
        "resourceVersion": "7",
    },
    "note": "0/1 nodes are available: 1 Insufficient cpu.",
    "type": "Warning",
}

# Which fields hold a nested message, by message: enough to decode both test objects.
_NESTED: dict[str, dict[int, str]] = {
    "Unknown": {1: "TypeMeta", 2: "raw"},
    "Binding": {1: "ObjectMeta", 2: "ObjectReference"},
    "Event": {
        1: "ObjectMeta",
        2: "Time",
        3: "EventSeries",
        8: "ObjectReference",
        9: "ObjectReference",
        12: "EventSource",
        13: "Time",
        14: "Time",
    },
    "EventSeries": {2: "Time"},
    "ObjectMeta": {8: "Time", 9: "Time"},
}


def tree(data: bytes, message: str, kind: str = "") -> dict[int, Any]:
    """A message decoded recursively, zero values (0, b"", empty messages) dropped."""
    out: dict[int, Any] = {}
    for number, value in kproto.read_fields(data).items():
        sub = _NESTED.get(message, {}).get(number)
        if sub == "raw":
            decoded: Any = tree(value, kind) if isinstance(value, bytes) else value
        elif sub is not None and isinstance(value, bytes):
            decoded = tree(value, sub)
        else:
            decoded = value
        if decoded in (0, b"", {}):
            continue
        out[number] = decoded
    return out


def envelope_tree(body: bytes) -> dict[int, Any]:
    assert body.startswith(kproto.MAGIC)
    _, kind, _ = kproto.unwrap(body)
    return tree(body[len(kproto.MAGIC) :], "Unknown", kind)


def test_binding_is_the_message_go_encodes() -> None:
    ours = kproto.encode(BINDING)
    assert ours is not None
    assert envelope_tree(ours) == envelope_tree(GO_BINDING)
    assert kproto.unwrap(ours)[:2] == ("v1", "Binding")


def test_event_is_the_message_go_encodes() -> None:
    ours = kproto.encode(EVENT)
    assert ours is not None
    assert envelope_tree(ours) == envelope_tree(GO_EVENT)


@pytest.mark.parametrize(
    "body",
    [
        {**EVENT, "deprecatedCount": 3},  # a field the schema leaves out
        {**EVENT, "metadata": {"name": "e", "ownerReferences": []}},
        {**EVENT, "eventTime": "yesterday"},
        {**EVENT, "eventTime": "2026-12-05T01:02:03"},  # no zone: not a Kubernetes time
        {**EVENT, "series": {"count": "2"}},
        {**BINDING, "apiVersion": "v2"},
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {}},
        {"kind": "Binding"},
    ],
)
def test_what_the_schema_cannot_say_goes_as_json(body: dict[str, Any]) -> None:
    assert kproto.encode(body) is None


def test_null_fields_are_absent() -> None:
    with_null = kproto.encode({**EVENT, "related": None, "series": None})
    without = kproto.encode({k: v for k, v in EVENT.items() if k != "series"})
    assert with_null == without


# The encodings kproto wrote before its encoding plans (each object's fields looked up
# schema field by schema field): the plans must send the same bytes, field for field.
BEFORE_PLANS: list[tuple[str, dict[str, Any], str]] = [
    ("binding", BINDING, "af760db48f2f61ffe6ec6d3c37256ac22657de8167d48187dbcf13d3544d120d"),
    (
        "event-with-series",
        EVENT,
        "82fddcc79b327f7ed13fdbddb80862ee0a4c05cd0d9bfb34c2e082a1274f4945",
    ),
    (
        "event-keys-reordered",
        dict(reversed(list(EVENT.items()))),
        "82fddcc79b327f7ed13fdbddb80862ee0a4c05cd0d9bfb34c2e082a1274f4945",
    ),
    (
        "event-nulls",
        {**EVENT, "related": None, "series": None, "note": None},
        "caa46c4cd04809aaa4412ff30466337404891e4972f3b9b7858718d463a2d010",
    ),
    (
        "event-related-labels-annotations",
        {
            **EVENT,
            "metadata": {
                "name": "e",
                "generateName": "g-",
                "namespace": "ns",
                "uid": "u",
                "resourceVersion": "9",
                "labels": {"a": "1", "b": ""},
                "annotations": {"k/x": "v\u00e9"},
            },
            "related": {"kind": "Node", "name": "n\u00fc", "fieldPath": "spec"},
        },
        "fc2a5186599e53056ee32231c832e5928daca6bd8c1982f5e2708f28d73b512d",
    ),
    (
        "event-long-note-negative-count",
        {
            **EVENT,
            "note": "x" * 20000,
            "series": {"count": -5, "lastObservedTime": "1969-12-31T23:59:59.5Z"},
        },
        "dda773c60dc9ff8ac93b4a81c4fbff27961d855bb0fa431399a42170f022604c",
    ),
    (
        "event-whole-second-offset-zone",
        {**EVENT, "eventTime": "2026-12-05T03:02:03+02:00", "series": None},
        "23b0b2942b0bde86ceb8a1de0b3ce7cbcfec0328808a5f908cfa332e96990c33",
    ),
]


@pytest.mark.parametrize(
    ("body", "digest"), [(b, d) for _, b, d in BEFORE_PLANS], ids=[i for i, _, _ in BEFORE_PLANS]
)
def test_the_bytes_are_those_sent_before_the_encoding_plans(
    body: dict[str, Any], digest: str
) -> None:
    # Twice: the first call builds the body's plan, the second uses the kept one.
    for _ in range(2):
        encoded = kproto.encode(body)
        assert encoded is not None
        assert hashlib.sha256(encoded).hexdigest() == digest


def test_a_plan_kept_for_one_object_does_not_hide_another_objects_unknown_field() -> None:
    assert kproto.encode(BINDING) is not None
    assert kproto.encode({**BINDING, "metadata": {"name": "p", "finalizers": []}}) is None
    assert kproto.encode({**BINDING, "extra": 1}) is None
    assert kproto.encode(BINDING) is not None


names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@given(
    name=names,
    namespace=names,
    note=st.text(max_size=1100),
    count=st.integers(min_value=0, max_value=2**31 - 1),
    micros=st.integers(min_value=0, max_value=4_000_000_000 * 1_000_000),
    labels=st.dictionaries(names, names, max_size=3),
)
def test_every_field_reads_back(
    *, name: str, namespace: str, note: str, count: int, micros: int, labels: dict[str, str]
) -> None:
    from datetime import UTC, datetime, timedelta

    stamp = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)
    body = {
        **EVENT,
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "eventTime": stamp.isoformat().replace("+00:00", "Z"),
        "series": {"count": count, "lastObservedTime": "2026-12-05T01:02:04Z"},
        "note": note,
    }
    encoded = kproto.encode(body)
    assert encoded is not None
    raw = kproto.unwrap(encoded)[2]
    event = kproto.read_fields(raw)
    meta = kproto.read_fields(event[1])  # type: ignore[arg-type]
    assert meta.get(1, b"") == name.encode()
    assert meta.get(3, b"") == namespace.encode()
    assert event.get(10, b"") == note.encode()
    when = kproto.read_fields(event[2])  # type: ignore[arg-type]
    assert when.get(1, 0) * 1_000_000 + when.get(2, 0) // 1000 == micros  # type: ignore[operator]
    series = kproto.read_fields(event[3])  # type: ignore[arg-type]
    assert series.get(1, 0) == count


@given(value=st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_varints_read_back_in_the_fewest_bytes(value: int) -> None:
    data = kproto._varint(value)
    unsigned = value % 2**64  # int64 negatives as two's complement
    assert kproto._read_varint(data, 0) == (unsigned, len(data))
    assert len(data) == max(1, -(-unsigned.bit_length() // 7))


def test_a_protobuf_status_becomes_an_api_error() -> None:
    # meta/v1 Status{status: "Failure", message: ..., reason: "Conflict", code: 409}
    message = b"pod p is already assigned to node n0"
    raw = (
        b"\x12\x07Failure"
        + b"\x1a"
        + bytes([len(message)])
        + message
        + b"\x22\x08Conflict"
        + b"\x30"
        + bytes([0x99, 0x03])
    )
    body = kproto.MAGIC + b"\x0a\x0c\x0a\x02v1\x12\x06Status" + b"\x12" + bytes([len(raw)]) + raw
    err = error_from_response(409, body, method="POST", path="/x")
    assert (err.status, err.reason, err.message) == (409, "Conflict", message.decode())


def test_a_truncated_protobuf_answer_is_quoted_not_decoded() -> None:
    err = error_from_response(500, kproto.MAGIC + b"\x0a\x7f", method="POST", path="/x")
    assert err.status == 500
    assert err.reason == "Internal Server Error"
