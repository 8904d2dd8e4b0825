"""CPUUtilization: 100 * (1 - utilisation) from a node annotation, the default score for
missing or malformed values, one log line per malformed node version, args validation."""

from __future__ import annotations

from typing import Any

import pytest
from asched.api import Node, decode_node
from asched.framework import ArgsError, CycleState, NodeInfo
from asched.testing import FakeHandle, Runner, enable, make_node, make_pod, node_info
from structlog.testing import capture_logs

from asched_policies.cpu_utilization import SPEC, CPUUtilization, CPUUtilizationArgs

ANNOTATION = "policies.asched.dev/cpu-utilization"


def plugin(args: dict[str, Any] | None = None) -> CPUUtilization:
    return CPUUtilization(CPUUtilizationArgs.from_dict(args or {}, "args"), FakeHandle())


def node(value: str | None = None, key: str = ANNOTATION, version: str = "1") -> Node:
    raw = make_node("n1").raw()
    raw["metadata"]["resourceVersion"] = version
    if value is not None:
        raw["metadata"]["annotations"] = {key: value}
    return decode_node(raw)


def score(p: CPUUtilization, n: Node) -> int:
    return p.score(CycleState(), make_pod("p").obj(), node_info(n))


OK, BAD = False, True  # does the case log a malformed value?

SCORE_CASES = [
    pytest.param(None, node("0"), 100, OK, id="idle"),
    pytest.param(None, node("1"), 0, OK, id="saturated"),
    pytest.param(None, node("0.25"), 75, OK, id="quarter-busy"),
    pytest.param(None, node("0.333"), 67, OK, id="rounded"),
    pytest.param(None, node("0.7"), 30, OK, id="float-error-does-not-truncate"),
    pytest.param(None, node(" 0.5 "), 50, OK, id="blanks-allowed"),
    pytest.param(None, node(None), 50, OK, id="missing-gets-default"),
    pytest.param({"defaultScore": 10}, node(None), 10, OK, id="missing-gets-args-default"),
    pytest.param(None, node("busy"), 50, BAD, id="not-a-number"),
    pytest.param(None, node("1.5"), 50, BAD, id="above-one"),
    pytest.param(None, node("-0.1"), 50, BAD, id="negative"),
    pytest.param(None, node("nan"), 50, BAD, id="nan"),
    pytest.param(None, node("inf"), 50, BAD, id="infinite"),
    pytest.param({"defaultScore": 0}, node("busy"), 0, BAD, id="malformed-gets-args-default"),
    pytest.param(
        {"annotation": "metrics.example.com/cpu"},
        node("0.1", "metrics.example.com/cpu"),
        90,
        OK,
        id="custom-annotation",
    ),
    pytest.param(
        {"annotation": "metrics.example.com/cpu"},
        node("0.1"),
        50,
        OK,
        id="custom-annotation-ignores-default-key",
    ),
]


@pytest.mark.parametrize(("args", "n", "want", "warns"), SCORE_CASES)
def test_score(args: dict[str, Any] | None, n: Node, want: int, warns: bool) -> None:
    with capture_logs() as logs:
        assert score(plugin(args), n) == want
    assert [e["event"] for e in logs] == (["cpu_utilization_malformed"] if warns else [])


def test_malformed_value_logged_once_per_node_version() -> None:
    p = plugin()
    first, second = node("oops", version="7"), node("still-bad", version="8")
    with capture_logs() as logs:
        for _ in range(3):
            score(p, first)
        score(p, second)
        score(p, node("0.5", version="9"))
    malformed = [e for e in logs if e["event"] == "cpu_utilization_malformed"]
    assert [(e["node"], e["resource_version"], e["value"]) for e in malformed] == [
        ("n1", "7", "oops"),
        ("n1", "8", "still-bad"),
    ]
    assert all(e["log_level"] == "warning" for e in malformed)


def test_node_without_object_is_an_error() -> None:
    with pytest.raises(LookupError):
        plugin().score(CycleState(), make_pod("p").obj(), NodeInfo())


def test_args_defaults() -> None:
    assert CPUUtilizationArgs.from_dict({}, "args") == CPUUtilizationArgs(ANNOTATION, 50)


ARGS_ERRORS = [
    pytest.param({"defaultScore": 101}, "args.defaultScore", "must be [0, 100]", id="too-high"),
    pytest.param({"defaultScore": -1}, "args.defaultScore", "must be [0, 100]", id="negative"),
    pytest.param({"defaultScore": 0.5}, "args.defaultScore", "must be an integer", id="float"),
    pytest.param({"annotation": "bad key"}, "args.annotation", "Invalid value", id="bad-key"),
    pytest.param({"annotation": 3}, "args.annotation", "must be a string", id="key-not-string"),
    pytest.param({"threshold": 0.8}, "args.threshold", "unknown field", id="unknown-field"),
]


@pytest.mark.parametrize(("raw", "path", "message"), ARGS_ERRORS)
def test_args_errors(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as err:
        CPUUtilizationArgs.from_dict(raw, "args")
    assert err.value.path == path
    assert message in err.value.message


# --- through the framework --------------------------------------------------------


async def test_framework_prefers_the_idlest_node() -> None:
    def reported(name: str, value: str | None) -> Node:
        raw = make_node(name).raw()
        if value is not None:
            raw["metadata"]["annotations"] = {ANNOTATION: value}
        return decode_node(raw)

    nodes = [reported("busy", "0.9"), reported("idle", "0.1"), reported("silent", None)]
    result = await Runner([enable(SPEC, args={"defaultScore": 20})], nodes=nodes).schedule(
        make_pod("p").obj()
    )
    assert result.scores["CPUUtilization"].raw == {"busy": 10, "idle": 90, "silent": 20}
    assert result.ranking() == ["idle", "silent", "busy"]
    assert result.selected == "idle"
