"""PodView's gang counts (index lengths) agree with counting its member lists."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from asched.api import Pod
from asched.backend.cache import Cache
from asched.informers.store import Store
from asched.scheduler.podview import POD_INDEXERS, PodView
from tests.builders import make_pod

# (operation, pod index, group index)
_OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "assume", "forget", "bind", "delete"]),
        st.integers(0, 7),
        st.integers(0, 2),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(_OPS)
def test_counts_match_the_member_lists(ops: list[tuple[str, int, int]]) -> None:
    store: Store[Pod] = Store(POD_INDEXERS)
    cache = Cache()
    view = PodView(store, cache)
    for rv, (op, i, g) in enumerate(ops):
        key = f"default/p{i}"
        current = store.get(key)
        if current is None:
            if op == "add":
                pod = make_pod(f"p{i}").uid(f"u{i}").scheduling_group(f"g{g}").obj()
                store.upsert(key, pod, str(rv))
        elif op == "delete":
            store.remove(key)
            cache.remove_pod(current)
        elif current.node_name:
            pass
        elif op == "assume" and cache.get_pod(current.uid) is None:
            cache.assume_pod(replace(current, node_name="n1"))
        elif op == "forget":
            cache.forget_pod(current)
        elif op == "bind":
            # The informer's callback: the store first, then the handler confirms.
            bound = replace(current, node_name="n2")
            store.upsert(key, bound, str(rv))
            cache.add_pod(bound)
        for group in ("g0", "g1", "g2"):
            members = view.pods_in_scheduling_group("default", group)
            assert view.scheduling_group_size("default", group) == len(members)
            assert view.scheduled_in_scheduling_group("default", group) == sum(
                1 for p in members if p.node_name
            )
