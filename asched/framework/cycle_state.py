"""Per-cycle scratch data shared by the plugins of one scheduling attempt.

Mirrors kube-scheduler's CycleState, with typed keys: `StateKey[T]` carries its value's
type, so `state.read(KEY)` is checked by mypy. PreFilter/PreScore write; the fan-out
stages (Filter, Score) only read. `clone()` is shallow per key, and values that
preemption's dry runs mutate (through AddPod/RemovePod) implement `StateData.clone()`.

A member's state in a pod-group cycle also points at the group cycle's own CycleState
(`pod_group_cycle`, Go's GetPodGroupSchedulingCycle), which every member of that cycle
shares; it is None outside a group cycle and once the member goes to binding.
"""

from __future__ import annotations

from typing import Generic, Protocol, Self, TypeVar, runtime_checkable

T = TypeVar("T")


@runtime_checkable
class StateData(Protocol):
    """Optional, for a value a plugin writes to CycleState (kube-scheduler fwk.StateData):
    the value copies itself when the state is cloned.

    `clone` is called by CycleState.clone: for the second Filter pass with nominated pods
    (once per node that holds such pods) and by preemption's dry runs, on the event loop,
    in the scheduling cycle. It returns a copy that AddPod/RemovePod may then change
    without changing this value; a value without it is shared by both states, so it must
    then never be mutated after PreFilter/PreScore wrote it. Cost: proportional to what
    the extensions mutate; keep the rest shared. Found once per value type (isinstance).
    """

    def clone(self) -> Self: ...


# Value type -> whether it implements StateData: a runtime-Protocol isinstance walks its
# members, and clone() runs per node in the nominated pass.
_CLONES: dict[type, bool] = {}


class StateKey(Generic[T]):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


class CycleState:
    __slots__ = (
        "_data",
        "pod_group_cycle",
        "record_metrics",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self) -> None:
        self._data: dict[str, object] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        # PreBind plugins whose PreBindPreFlight said Skip (SetSkipPreBindPlugins).
        self.skip_pre_bind_plugins: set[str] = set()
        self.record_metrics = False
        self.pod_group_cycle: CycleState | None = None

    def write(self, key: StateKey[T], value: T) -> None:
        self._data[key.name] = value

    # Filter and Score read state once per node: no typing.cast call on this path.
    def read(self, key: StateKey[T]) -> T:
        """Raises KeyError when PreFilter/PreScore did not write the key."""
        return self._data[key.name]  # type: ignore[return-value]

    def get(self, key: StateKey[T]) -> T | None:
        return self._data.get(key.name)  # type: ignore[return-value]

    def delete(self, key: StateKey[T]) -> None:
        self._data.pop(key.name, None)

    def clone(self) -> CycleState:
        c = CycleState()
        for k, v in self._data.items():
            t = type(v)
            clones = _CLONES.get(t)
            if clones is None:
                clones = _CLONES[t] = isinstance(v, StateData)
            c._data[k] = v.clone() if clones else v  # type: ignore[attr-defined]
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.record_metrics = self.record_metrics
        c.pod_group_cycle = self.pod_group_cycle
        return c
