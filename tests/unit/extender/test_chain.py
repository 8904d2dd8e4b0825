"""The extenders at each point: interest, filter chaining, scores, bind, preemption."""

from __future__ import annotations

from typing import Any

import pytest

from asched.config import ManagedResource
from asched.extender import ExtenderError, Extenders, WireObjects
from asched.framework.nodeinfo import NodeInfo
from asched.framework.status import Code
from asched.framework.types import NodeToStatus
from tests.builders import make_node, make_pod
from tests.unit.extender.fakes import fake_extender, keep_only

GPU = "example.com/gpu"


def _nodes(*names: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(n).obj()) for n in names]


def _never(verb: str, request: Any) -> Any:
    raise AssertionError(f"{verb} was called")


@pytest.mark.parametrize(
    ("managed", "pod", "interested"),
    [
        pytest.param((), make_pod("p").obj(), True, id="no-managed-resources-sees-all"),
        pytest.param((GPU,), make_pod("p").cpu("1").obj(), False, id="pod-without-it"),
        pytest.param((GPU,), make_pod("p").request(GPU, "1").obj(), True, id="container"),
        pytest.param(
            (GPU,),
            make_pod("p").init_container("init", requests={GPU: "1"}).obj(),
            True,
            id="init-container",
        ),
        pytest.param(
            ("example.com/fpga", GPU),
            make_pod("p").request(GPU, "1", container=0).obj(),
            True,
            id="one-of-several",
        ),
    ],
)
def test_is_interested(managed: tuple[str, ...], pod: Any, interested: bool) -> None:
    ext, _ = fake_extender(_never, managed_resources=tuple(ManagedResource(m) for m in managed))
    assert ext.is_interested(pod) is interested


async def test_filters_chain_and_record_why_nodes_failed() -> None:
    first, p1 = fake_extender(keep_only("a", "b"), filter_verb="filter", node_cache_capable=True)

    def second(verb: str, request: Any) -> Any:
        assert request["NodeNames"] == ["a", "b"]  # only what the first kept
        return {
            "NodeNames": ["a"],
            "FailedNodes": {"b": "soft"},
            "FailedAndUnresolvableNodes": {"b": "hard"},
        }

    ext2, _ = fake_extender(
        second, url_prefix="http://two", filter_verb="f", node_cache_capable=True
    )
    statuses = NodeToStatus()
    kept = await Extenders([first, ext2]).filter(
        make_pod("p").obj(), _nodes("a", "b", "c"), statuses
    )
    assert [n.name for n in kept] == ["a"]
    assert p1.calls[0][0] == "filter"
    c, b = statuses.get("c"), statuses.get("b")
    assert c is not None
    assert (c.code, c.reasons) == (Code.UNSCHEDULABLE, ("not mine",))
    # failedAndUnresolvableNodes wins over failedNodes for the same node.
    assert b is not None
    assert (b.code, b.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("hard",))


async def test_full_nodes_sent_unless_node_cache_capable() -> None:
    objects = WireObjects()
    decode = objects.keeping_nodes(lambda raw: raw)
    decode({"metadata": {"name": "a"}, "spec": {"podCIDR": "10.0.0.0/24"}})

    def answer(verb: str, request: Any) -> Any:
        assert request["NodeNames"] is None
        assert request["Nodes"]["items"][0]["spec"] == {"podCIDR": "10.0.0.0/24"}
        return {"Nodes": {"items": [{"metadata": {"name": "a"}}]}}

    ext, poster = fake_extender(answer, objects, filter_verb="filter")
    kept = await Extenders([ext]).filter(make_pod("p").obj(), _nodes("a", "b"), NodeToStatus())
    assert [n.name for n in kept] == ["a"]
    assert len(poster.calls) == 1


async def test_filter_error_fails_unless_ignorable() -> None:
    down = ExtenderError(
        'Post "http://ext/filter": dial tcp 127.0.0.1:1: connect: connection refused'
    )
    failing, _ = fake_extender(lambda v, r: down, filter_verb="filter")
    with pytest.raises(ExtenderError) as info:
        await Extenders([failing]).filter(make_pod("p").obj(), _nodes("a"), NodeToStatus())
    assert info.value is down
    ignorable, _ = fake_extender(lambda v, r: down, filter_verb="filter", ignorable=True)
    kept = await Extenders([ignorable]).filter(make_pod("p").obj(), _nodes("a"), NodeToStatus())
    assert [n.name for n in kept] == ["a"]


async def test_filter_answer_error_field_is_the_error() -> None:
    ext, _ = fake_extender(lambda v, r: {"Error": "no capacity"}, filter_verb="filter")
    with pytest.raises(ExtenderError, match=r"^no capacity$"):
        await Extenders([ext]).filter(make_pod("p").obj(), _nodes("a"), NodeToStatus())


async def test_a_node_not_sent_is_an_error() -> None:
    ext, _ = fake_extender(
        lambda v, r: {"NodeNames": ["zz"]}, filter_verb="filter", node_cache_capable=True
    )
    with pytest.raises(ExtenderError) as info:
        await Extenders([ext]).filter(make_pod("p").obj(), _nodes("a"), NodeToStatus())
    assert str(info.value) == (
        'extender "http://ext" claims a filtered node "zz" which is not found in the input '
        "node list"
    )


async def test_uninterested_extender_is_not_called() -> None:
    ext, _ = fake_extender(_never, filter_verb="filter", managed_resources=(ManagedResource(GPU),))
    kept = await Extenders([ext]).filter(make_pod("p").obj(), _nodes("a"), NodeToStatus())
    assert [n.name for n in kept] == ["a"]


def test_ignorable_extenders_go_last() -> None:
    a, _ = fake_extender(_never, url_prefix="http://a", ignorable=True)
    b, _ = fake_extender(_never, url_prefix="http://b")
    assert [e.name for e in Extenders([a, b]).all] == ["http://b", "http://a"]


async def test_scores_are_weighted_and_scaled_to_max_node_score() -> None:
    # finalscore = score * weight * (MaxNodeScore / MaxExtenderPriority) = score * weight * 10
    one, _ = fake_extender(
        lambda v, r: [{"Host": "a", "Score": 3}, {"Host": "b", "Score": 10}],
        prioritize_verb="prioritize",
        weight=2,
    )
    two, _ = fake_extender(
        lambda v, r: [{"Host": "a", "Score": 1}],
        url_prefix="http://two",
        prioritize_verb="p",
        weight=5,
    )
    failing, _ = fake_extender(
        lambda v, r: ExtenderError("down"), url_prefix="http://three", prioritize_verb="p", weight=9
    )
    scores = await Extenders([one, two, failing]).prioritize(make_pod("p").obj(), _nodes("a", "b"))
    assert scores.totals == {"a": 3 * 2 * 10 + 1 * 5 * 10, "b": 10 * 2 * 10}
    assert sorted(scores.parts["a"]) == [("http://ext", 60), ("http://two", 50)]


async def test_a_filter_only_extender_scores_every_node_zero() -> None:
    ext, poster = fake_extender(_never, filter_verb="filter")
    scores = await Extenders([ext]).prioritize(make_pod("p").obj(), _nodes("a", "b"))
    assert scores.totals == {"a": 0, "b": 0}
    assert poster.calls == []


async def test_bind_by_the_interested_binder() -> None:
    calls: list[Any] = []

    def bind(verb: str, request: Any) -> Any:
        calls.append(request)
        return {"Error": ""}

    ext, _ = fake_extender(bind, bind_verb="bind")
    pod = make_pod("p", "ns").uid("u1").obj()
    assert await Extenders([ext]).bind(pod, "n1") == (True, None)
    assert calls == [{"PodName": "p", "PodNamespace": "ns", "PodUID": "u1", "Node": "n1"}]


async def test_bind_errors_and_fallbacks() -> None:
    pod = make_pod("p").obj()
    refusing, _ = fake_extender(lambda v, r: {"Error": "refused"}, bind_verb="bind")
    bound, err = await Extenders([refusing]).bind(pod, "n1")
    assert bound
    assert str(err) == "refused"
    ignorable, _ = fake_extender(lambda v, r: {"Error": "refused"}, bind_verb="b", ignorable=True)
    assert await Extenders([ignorable]).bind(pod, "n1") == (False, None)
    gpu_only, _ = fake_extender(_never, bind_verb="bind", managed_resources=(ManagedResource(GPU),))
    assert await Extenders([gpu_only]).bind(pod, "n1") == (False, None)


async def test_preempt_narrows_candidates_and_maps_victims_back() -> None:
    v1, v2 = make_pod("v1").uid("u1").obj(), make_pod("v2").uid("u2").obj()

    def answer(verb: str, request: Any) -> Any:
        assert request["NodeNameToMetaVictims"] == {
            "n1": {"Pods": [{"UID": "u1"}], "NumPDBViolations": 0},
            "n2": {"Pods": [{"UID": "u2"}], "NumPDBViolations": 1},
        }
        return {"NodeNameToMetaVictims": {"n2": {"Pods": [{"UID": "u2"}], "NumPDBViolations": 1}}}

    ext, _ = fake_extender(answer, preempt_verb="preempt", node_cache_capable=True)
    out = await Extenders([ext]).preempt(
        make_pod("p").obj(), {"n1": ([v1], 0), "n2": ([v2], 1)}, {"n1": [v1], "n2": [v2]}.get
    )
    assert out == {"n2": ([v2], 1)}


async def test_preempt_without_victims_is_an_error_unless_ignorable() -> None:
    v1 = make_pod("v1").uid("u1").obj()
    answer = {"NodeNameToMetaVictims": {"n1": {"Pods": []}}}
    ext, _ = fake_extender(lambda v, r: answer, preempt_verb="preempt")
    with pytest.raises(ExtenderError, match='expected at least one victim pod on node "n1"'):
        await Extenders([ext]).preempt(make_pod("p").obj(), {"n1": ([v1], 0)}, {"n1": [v1]}.get)
    ign, _ = fake_extender(lambda v, r: answer, preempt_verb="preempt", ignorable=True)
    assert (
        await Extenders([ign]).preempt(make_pod("p").obj(), {"n1": ([v1], 0)}, {"n1": [v1]}.get)
        == {}
    )
