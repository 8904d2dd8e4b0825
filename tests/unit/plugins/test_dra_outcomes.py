"""A node's kept allocation outcome (outcomes.py) must be what a fresh search would
decide: across a sequence of pods, each with its own claim of one of a few shapes and
the cluster's allocated devices changing between them, an allocator sharing one
SliceIndex (the plugin's) answers every node exactly as an allocator that indexes the
slices anew for each pod (no memo)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from asched.api.dra import (
    Allocation,
    ResourceClaim,
    decode_device_class,
    decode_resource_claim,
    decode_resource_slice,
)
from asched.plugins.dynamicresources.allocator import AllocationError, Allocator
from asched.plugins.dynamicresources.outcomes import NodeOutcomes
from asched.plugins.dynamicresources.pools import SliceIndex
from asched.plugins.dynamicresources.tracker import AllocatedState
from asched.testing import dra

GPU = "gpu.example.com"
NODES = ("n0", "n1", "n2")
MODEL_A = f'device.attributes["{GPU}"].model == "a"'
SLICES = [
    decode_resource_slice(
        dra.resource_slice(
            f"{node}-gpu",
            node,
            [dra.device(f"gpu-{d}", {"model": "ab"[(i + d) % 2]}) for d in range(3)],
        )
    )
    for i, node in enumerate(NODES)
]
DEVICES = [(GPU, node, f"gpu-{d}") for node in NODES for d in range(3)]
CLASSES = {"gpu": decode_device_class(dra.device_class("gpu", f'device.driver == "{GPU}"'))}


def _claim(name: str, shape: int) -> ResourceClaim:
    requests: list[dict[str, Any]] = [
        [dra.device_request("r", "gpu")],
        [dra.device_request("r", "gpu", MODEL_A)],
        [dra.device_request("r", "gpu", count=2)],
        [dra.device_request("r", "gpu"), dra.device_request("s", "gpu", MODEL_A)],
        [dra.device_request("r", "gpu", mode="All")],
        [dra.device_request("r", "missing")],
    ][shape]
    raw = dra.resource_claim(name, *requests)
    if shape == 2:
        raw["spec"]["devices"]["constraints"] = [
            {"requests": ["r"], "matchAttribute": f"{GPU}/model"}
        ]
    return decode_resource_claim(raw)


def _outcome(allocator: Allocator, node: str, claims: list[ResourceClaim]) -> object:
    try:
        made: list[Allocation] | None = allocator.allocate(node, {}, claims)
    except AllocationError as exc:
        return ("error", str(exc))
    return made


steps = st.lists(
    st.tuples(
        st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=2),
        st.frozensets(st.sampled_from(DEVICES)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(steps)
def test_kept_outcomes_agree_with_a_fresh_search(
    pods: list[tuple[list[int], frozenset[tuple[str, str, str]]]],
) -> None:
    kept = SliceIndex(SLICES)
    for i, (shapes, allocated) in enumerate(pods):
        # Each pod has claims of its own (new objects), as pods of one template do.
        claims = [_claim(f"c{i}-{j}", shape) for j, shape in enumerate(shapes)]
        state = AllocatedState(devices=set(allocated))
        memoised = Allocator(CLASSES.get, state, kept)
        fresh = Allocator(CLASSES.get, AllocatedState(devices=set(allocated)), list(SLICES))
        for node in NODES:
            assert _outcome(memoised, node, claims) == _outcome(fresh, node, claims), (i, node)


def test_shape_numbers_are_never_reused_after_the_memo_starts_over() -> None:
    outcomes = NodeOutcomes()
    first = outcomes.shape(("a",))
    seen = {first}
    for i in range(1100):  # past the memo's bound: it clears itself once
        seen.add(outcomes.shape(("b", i)))
    assert len(seen) == 1101
    assert outcomes.shape(("a",)) not in seen  # numbered anew, not given an old number
    assert outcomes.shape([1]) is None  # unhashable: never kept
