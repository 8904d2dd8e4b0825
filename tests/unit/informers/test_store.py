"""Store: the read side plugins see (ObjectStore) and the owner's writes."""

from __future__ import annotations

from asched.api import Pod
from asched.framework.listers import ObjectStore
from asched.informers import Store
from tests.builders import make_pod


def test_store_reads_and_writes() -> None:
    store: Store[Pod] = Store()
    view: ObjectStore[Pod] = store  # mypy checks the protocol
    a1, a2 = make_pod("a").obj(), make_pod("a").obj()

    assert store.upsert("default/a", a1, "1") is None
    assert store.upsert("default/a", a2, "2") is a1
    assert (view.get("default/a"), store.resource_version("default/a")) == (a2, "2")
    assert view.list() == [a2]
    assert "default/a" in store
    assert len(store) == 1
    assert not view.has_synced()

    store.mark_synced()
    assert store.remove("default/a") is a2
    assert store.remove("default/a") is None
    assert (view.list(), view.has_synced(), store.resource_version("default/a")) == ([], True, None)


def test_listeners_hear_every_later_change_as_old_and_new() -> None:
    store: Store[Pod] = Store()
    before, a1, a2 = make_pod("b").obj(), make_pod("a").obj(), make_pod("a").obj()
    store.upsert("default/b", before, "1")
    heard: list[tuple[Pod | None, Pod | None]] = []
    view: ObjectStore[Pod] = store
    view.add_listener(lambda old, new: heard.append((old, new)))

    store.upsert("default/a", a1, "2")
    store.upsert("default/a", a2, "3")
    store.remove("default/a")
    store.remove("default/a")  # nothing there: nothing changed, nothing told

    assert heard == [(None, a1), (a1, a2), (a2, None)]
    assert all(new is not before and old is not before for old, new in heard)
