"""NodeToStatus keeps a per-Status tally so a cycle never walks every rejected node."""

from __future__ import annotations

from asched.framework.status import Code, Status
from asched.framework.types import NodeToStatus


def _counts(nts: NodeToStatus) -> dict[str, int]:
    return {st.reasons[0]: n for st, n in nts.tally_by_id().values() if n}


def test_set_counts_and_an_overwrite_moves_the_node() -> None:
    a, b = Status(Code.UNSCHEDULABLE, ("a",)), Status(Code.UNSCHEDULABLE, ("b",))
    nts = NodeToStatus()
    nts.set("n1", a)
    nts.set("n2", a)
    nts.set("n1", b)
    assert _counts(nts) == {"a": 1, "b": 1}
    assert nts.distinct() == [a, b]


def test_add_rejections_takes_the_pass_counts() -> None:
    a = Status(Code.UNSCHEDULABLE, ("a",))
    nts = NodeToStatus()
    nts.add_rejections({"n1": a, "n2": a}, [(a, 2)])
    assert _counts(nts) == {"a": 2}
    assert len(nts) == 2


def test_add_rejections_over_listed_nodes_recounts_from_the_map() -> None:
    a, b = Status(Code.UNSCHEDULABLE, ("a",)), Status(Code.UNSCHEDULABLE, ("b",))
    nts = NodeToStatus()
    nts.set("n1", a)
    # n1 is listed already: the pass's counts would count it twice; the map decides.
    nts.add_rejections({"n1": b, "n2": b}, [(b, 2)])
    assert _counts(nts) == {"b": 2}


def test_a_direct_write_that_grows_the_map_is_recounted() -> None:
    a = Status(Code.UNSCHEDULABLE, ("a",))
    nts = NodeToStatus()
    nts.set("n1", a)
    nts.statuses["n2"] = a
    assert _counts(nts) == {"a": 2}
    assert NodeToStatus().distinct() == []
