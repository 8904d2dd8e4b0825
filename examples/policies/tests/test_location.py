"""Location: same zone 100, same region 50, elsewhere 0; region-only wishes; Skip for
pods without (or with a malformed) location; args validation."""

from __future__ import annotations

from typing import Any

import pytest
from asched.api import Node, Pod
from asched.framework import ArgsError, Code, CycleState
from asched.testing import FakeHandle, Runner, make_node, make_pod, node_info
from structlog.testing import capture_logs

from asched_policies.location import SPEC, Location, LocationArgs

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
ANNOTATION = "policies.asched.dev/location"


def plugin(args: dict[str, Any] | None = None) -> Location:
    return Location(LocationArgs.from_dict(args or {}, "args"), FakeHandle())


def pod(location: str | None) -> Pod:
    b = make_pod("p")
    if location is not None:
        b.annotation(ANNOTATION, location)
    return b.obj()


def node(
    name: str, region: str | None, zone: str | None, keys: tuple[str, str] = (REGION, ZONE)
) -> Node:
    b = make_node(name)
    if region is not None:
        b.label(keys[0], region)
    if zone is not None:
        b.label(keys[1], zone)
    return b.obj()


NODES = [
    node("same-zone", "cn-north", "cn-north-1a"),
    node("same-region", "cn-north", "cn-north-1b"),
    node("zone-name-only", "cn-east", "cn-north-1a"),
    node("elsewhere", "cn-east", "cn-east-1a"),
    node("region-unlabelled-zone", "cn-north", None),
    node("unlabelled", None, None),
]


def run(p: Location, pd: Pod, nodes: list[Node]) -> dict[str, int] | str:
    state = CycleState()
    infos = [node_info(n) for n in nodes]
    st = p.pre_score(state, pd, infos)
    if st is not None:
        assert st.code == Code.SKIP
        return "skip"
    return {ni.name: p.score(state, pd, ni) for ni in infos}


SCORE_CASES = [
    pytest.param(
        pod("cn-north/cn-north-1a"),
        {
            "same-zone": 100,
            "same-region": 50,
            "zone-name-only": 0,
            "elsewhere": 0,
            "region-unlabelled-zone": 50,
            "unlabelled": 0,
        },
        id="region-and-zone",
    ),
    pytest.param(
        pod("cn-north"),
        {
            "same-zone": 100,
            "same-region": 100,
            "zone-name-only": 0,
            "elsewhere": 0,
            "region-unlabelled-zone": 100,
            "unlabelled": 0,
        },
        id="region-only",
    ),
    pytest.param(
        pod(" cn-north / cn-north-1b "),
        {
            "same-zone": 50,
            "same-region": 100,
            "zone-name-only": 0,
            "elsewhere": 0,
            "region-unlabelled-zone": 50,
            "unlabelled": 0,
        },
        id="blanks-trimmed",
    ),
    pytest.param(
        pod("us-west/us-west-2a"),
        {
            "same-zone": 0,
            "same-region": 0,
            "zone-name-only": 0,
            "elsewhere": 0,
            "region-unlabelled-zone": 0,
            "unlabelled": 0,
        },
        id="nowhere-near",
    ),
    pytest.param(pod(None), "skip", id="no-annotation-skips"),
]


@pytest.mark.parametrize(("pd", "want"), SCORE_CASES)
def test_score(pd: Pod, want: dict[str, int] | str) -> None:
    assert run(plugin(), pd, NODES) == want


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("", id="empty"),
        pytest.param("/cn-north-1a", id="zone-without-region"),
        pytest.param("cn-north/", id="slash-without-zone"),
        pytest.param("cn/north/1a", id="too-many-parts"),
    ],
)
def test_malformed_location_skips_and_warns(value: str) -> None:
    with capture_logs() as logs:
        assert run(plugin(), pod(value), NODES) == "skip"
    assert [(e["event"], e["value"]) for e in logs] == [("location_malformed", value)]


def test_custom_label_keys() -> None:
    keys = ("example.com/region", "example.com/zone")
    nodes = [node("custom", "eu", "eu-1", keys), node("standard", "eu", "eu-1")]
    p = plugin({"regionLabelKey": keys[0], "zoneLabelKey": keys[1]})
    assert run(p, pod("eu/eu-1"), nodes) == {"custom": 100, "standard": 0}


@pytest.mark.parametrize(
    ("pd", "want"),
    [
        pytest.param(pod("cn-north/cn-north-1b"), 50, id="located-pod"),
        pytest.param(pod(None), 0, id="no-annotation"),
        pytest.param(pod("/x"), 0, id="malformed"),
    ],
)
def test_score_without_pre_score(pd: Pod, want: int) -> None:
    assert plugin().score(CycleState(), pd, node_info(NODES[0])) == want


def test_args_defaults() -> None:
    assert LocationArgs.from_dict({}, "args") == LocationArgs(REGION, ZONE)


ARGS_ERRORS = [
    pytest.param(
        {"regionLabelKey": "-bad"}, "args.regionLabelKey", "Invalid value", id="bad-region-key"
    ),
    pytest.param(
        {"zoneLabelKey": "UPPER.example.com/zone"},
        "args.zoneLabelKey",
        "Invalid value",
        id="bad-zone-prefix",
    ),
    pytest.param({"zoneLabelKey": 1}, "args.zoneLabelKey", "must be a string", id="not-string"),
    pytest.param({"zone": "a"}, "args.zone", "unknown field", id="unknown-field"),
]


@pytest.mark.parametrize(("raw", "path", "message"), ARGS_ERRORS)
def test_args_errors(raw: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ArgsError) as err:
        LocationArgs.from_dict(raw, "args")
    assert err.value.path == path
    assert message in err.value.message


# --- through the framework --------------------------------------------------------


async def test_framework_selects_the_same_zone() -> None:
    runner = Runner([SPEC], nodes=NODES)
    result = await runner.schedule(pod("cn-north/cn-north-1b"))
    assert result.selected == "same-region"  # its zone is cn-north-1b
    assert result.totals["same-zone"] == 50
    unplaced = await runner.schedule(pod(None))
    assert unplaced.skipped_scores == {"Location"}
    assert unplaced.best == tuple(n.name for n in NODES)  # every node ties on 1
