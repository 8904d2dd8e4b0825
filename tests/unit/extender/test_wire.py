"""extender/v1 JSON: requests as kube-scheduler encodes them, answers as it decodes them."""

from __future__ import annotations

import orjson
import pytest

from asched.extender import wire


def test_extender_args_with_names_leaves_nodes_null() -> None:
    body = wire.extender_args(b'{"metadata":{"name":"p"}}', nodes=None, names=["a", "b"])
    assert orjson.loads(body) == {
        "Pod": {"metadata": {"name": "p"}},
        "Nodes": None,
        "NodeNames": ["a", "b"],
    }


def test_extender_args_with_full_nodes_is_a_node_list() -> None:
    nodes = [b'{"metadata":{"name":"a"}}', b'{"metadata":{"name":"b"}}']
    body = wire.extender_args(b"{}", nodes=nodes, names=None)
    assert orjson.loads(body) == {
        "Pod": {},
        "Nodes": {
            "metadata": {},
            "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}],
        },
        "NodeNames": None,
    }


def test_binding_args() -> None:
    assert orjson.loads(wire.binding_args("ns", "p", "u1", "n1")) == {
        "PodName": "p",
        "PodNamespace": "ns",
        "PodUID": "u1",
        "Node": "n1",
    }


def test_preemption_args_full_and_meta() -> None:
    full = wire.preemption_args(b'{"a":1}', {"n1": ([b'{"v":1}'], 2)}, None)
    assert orjson.loads(full) == {
        "Pod": {"a": 1},
        "NodeNameToVictims": {"n1": {"Pods": [{"v": 1}], "NumPDBViolations": 2}},
        "NodeNameToMetaVictims": None,
    }
    meta = wire.preemption_args(b"{}", None, {"n1": wire.MetaVictims(["u1", "u2"], 1)})
    assert orjson.loads(meta) == {
        "Pod": {},
        "NodeNameToVictims": None,
        "NodeNameToMetaVictims": {
            "n1": {"Pods": [{"UID": "u1"}, {"UID": "u2"}], "NumPDBViolations": 1}
        },
    }


def test_filter_result_decodes_every_field() -> None:
    body = orjson.dumps(
        {
            "NodeNames": ["a"],
            "Nodes": {"items": [{"metadata": {"name": "b"}}]},
            "FailedNodes": {"c": "busy"},
            "FailedAndUnresolvableNodes": {"d": "gone"},
            "Error": "",
        }
    )
    assert wire.decode_filter_result(body) == wire.FilterResult(
        node_names=["a"],
        nodes=["b"],
        failed_nodes={"c": "busy"},
        failed_and_unresolvable={"d": "gone"},
    )


def test_answers_match_field_names_ignoring_case_like_encoding_json() -> None:
    body = b'{"nodenames":["a"],"failedNodes":{"b":"x"},"error":"boom"}'
    result = wire.decode_filter_result(body)
    assert (result.node_names, result.failed_nodes, result.error) == (["a"], {"b": "x"}, "boom")
    assert wire.decode_host_priorities(b'[{"host":"a","score":3}]') == [("a", 3)]


def test_null_answers_are_empty() -> None:
    assert wire.decode_filter_result(b"null") == wire.FilterResult()
    assert wire.decode_host_priorities(b"null") == []
    assert wire.decode_binding_result(b"{}") == ""


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            b'[{"Host":"a","Score":1.5}]',
            "json: cannot unmarshal number 1.5 into Go struct field HostPriority.Score "
            "of type int64",
            id="fractional-score",
        ),
        pytest.param(
            b'{"Host":"a"}',
            "json: cannot unmarshal object into Go value of type extenderv1.HostPriorityList",
            id="not-a-list",
        ),
    ],
)
def test_bad_priorities_are_errors(body: bytes, message: str) -> None:
    with pytest.raises(wire.WireError) as info:
        wire.decode_host_priorities(body)
    assert str(info.value) == message


def test_preemption_result() -> None:
    body = (
        b'{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"}],"NumPDBViolations":1},"n2":null}}'
    )
    assert wire.decode_preemption_result(body) == {
        "n1": wire.MetaVictims(["u1"], 1),
        "n2": None,
    }
