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


def test_deferred_rejections_read_as_added_ones() -> None:
    a, b = Status(Code.UNSCHEDULABLE, ("a",)), Status(Code.UNSCHEDULABLE, ("b",))
    deferred, added = NodeToStatus(), NodeToStatus()
    chunks = [(("n1", "n2"), None, (a,)), (("n3", "n4", "n5"), [2, 1, 2], (a, b))]
    deferred.defer_rejections(chunks, [(a, 2), (a, 1), (b, 2)])
    added.add_rejections({"n1": a, "n2": a, "n3": b, "n4": a, "n5": b}, [(a, 2), (a, 1), (b, 2)])
    # Counted without building the map.
    assert len(deferred) == 5
    assert _counts(deferred) == {"a": 3, "b": 2}
    assert deferred.distinct() == [a, b]
    assert not deferred._statuses
    # Built, in the same order, when a status is read.
    assert deferred.get("n3") is b
    assert list(deferred.statuses.items()) == list(added.statuses.items())
    assert deferred == added


def test_deferred_rejections_over_listed_nodes_recount_from_the_map() -> None:
    a, b = Status(Code.UNSCHEDULABLE, ("a",)), Status(Code.UNSCHEDULABLE, ("b",))
    nts = NodeToStatus()
    nts.set("n1", a)
    nts.defer_rejections([(("n1", "n2"), None, (b,))], [(b, 2)])
    assert _counts(nts) == {"b": 2}
    assert nts.statuses == {"n1": b, "n2": b}


def test_a_set_after_deferred_rejections_keeps_the_tally() -> None:
    a, b = Status(Code.UNSCHEDULABLE, ("a",)), Status(Code.UNSCHEDULABLE, ("b",))
    nts = NodeToStatus()
    nts.defer_rejections([(("n1", "n2"), None, (a,))], [(a, 2)])
    nts.set("n2", b)
    nts.set("n3", b)
    assert _counts(nts) == {"a": 1, "b": 2}
    assert len(nts) == 3
