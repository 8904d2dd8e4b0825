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
