"""PodFold (InterPodAffinity's per-node folds): extending or rebuilding a node's fold gives
what a fold from scratch gives, and only pods not seen before are computed."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from asched.api import Pod
from asched.plugins.interpodaffinity.podfold import PodFold
from asched.testing.builders import make_pod

# Each step changes one node's pod list as the cache does: a pod appended (bound or
# assumed), removed, or replaced by a new object (a label update); or the node's scope
# (its labels) replaced.
_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["n1", "n2"]),
        st.sampled_from(["append", "append", "remove", "replace", "rescope"]),
        st.integers(min_value=0, max_value=30),
    ),
    max_size=60,
)


def _value(scope: object, pod: Pod) -> tuple[str, ...]:
    return (str(id(scope)), pod.uid, pod.labels.get("v", ""))


@settings(max_examples=300, deadline=None)
@given(steps=_STEPS)
def test_fold_equals_a_fold_from_scratch(steps: list[tuple[str, str, int]]) -> None:
    fold = PodFold[tuple[str, ...], list[tuple[str, ...]]](list, list.append)
    pods: dict[str, list[Pod]] = {"n1": [], "n2": []}
    scopes: dict[str, object] = {"n1": object(), "n2": object()}
    seen: set[tuple[int, int]] = set()  # (id(scope), id(pod)) computed so far
    alive: list[object] = list(scopes.values())  # no id is reused while the test runs
    seq = 0
    for node, op, pick in steps:
        plist = pods[node]
        if op == "append" or not plist:
            seq += 1
            plist.append(make_pod(f"p{seq}").label("v", "0").obj())
            alive.append(plist[-1])
        elif op == "remove":
            del plist[pick % len(plist)]
        elif op == "replace":
            i = pick % len(plist)
            plist[i] = replace(plist[i], labels={"v": str(pick)})
            alive.append(plist[i])
        else:
            scopes[node] = object()
            alive.append(scopes[node])
        scope = scopes[node]
        computed: list[Pod] = []

        def value_of(
            p: Pod, scope: object = scope, computed: list[Pod] = computed
        ) -> tuple[str, ...]:
            computed.append(p)
            return _value(scope, p)

        got = fold.fold(node, scope, list(plist), value_of)
        assert got == [_value(scope, p) for p in plist]
        # Only pods (objects) not computed under this scope before are computed again.
        for p in computed:
            assert (id(scope), id(p)) not in seen
            seen.add((id(scope), id(p)))
