"""Optional abilities are Protocols found with isinstance: a plugin that implements one is
used for it, a plugin that does not is never asked (asched.framework.interfaces)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from asched.api import Pod
from asched.framework.cycle_state import CycleState, StateKey
from asched.framework.events import EventResource
from asched.framework.interfaces import BackgroundTask, NeedsInformers
from asched.framework.listers import InformerRequest
from asched.framework.nodeinfo import NodeInfo
from asched.framework.registry import PluginSpec
from asched.framework.runtime import Framework, ProfileSpec
from asched.framework.status import Status
from tests.unit.framework.fakes import FakeServices, registry

_WIDGETS: InformerRequest[Any] = InformerRequest(
    resource="widgets.example.com/v1",
    list_path="/apis/example.com/v1/widgets",
    decode=lambda raw: raw,
    event_resource=EventResource.WILDCARD,
)


class _Plain:
    """A Filter plugin with no optional ability."""

    name = "Plain"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


class _Able(_Plain):
    """The same plugin with a background task and an informer of its own."""

    name = "Able"

    async def run(self) -> None:
        return None

    def informers(self) -> Sequence[InformerRequest[Any]]:
        return (_WIDGETS,)


def _framework(*names: str) -> Framework:
    reg = registry()
    for cls in (_Plain, _Able):
        reg.register(PluginSpec(cls.name, cls))
    points = {"queueSort": [("Sort", 0)], "filter": [(n, 0) for n in names]}
    return Framework(ProfileSpec("test", points, {}), reg, FakeServices())


def test_a_plugin_with_run_is_a_background_task_and_one_without_is_not() -> None:
    fwk = _framework("Plain", "Able")
    assert isinstance(fwk.plugins["Able"], BackgroundTask)
    assert not isinstance(fwk.plugins["Plain"], BackgroundTask)
    assert [p.name for p in fwk.background_tasks] == ["Able"]  # type: ignore[attr-defined]


def test_only_plugins_that_need_informers_are_asked_for_them() -> None:
    fwk = _framework("Plain", "Able")
    assert not isinstance(fwk.plugins["Plain"], NeedsInformers)
    assert fwk.informer_requests() == [_WIDGETS]
    assert _framework("Plain").informer_requests() == []


class _Counts:
    """State data that copies itself (StateData): clones are independent."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.cloned = 0

    def clone(self) -> Self:
        self.cloned += 1
        return type(self)(self.n)


class _Shared:
    """State data without clone(): shared by a clone, as written."""

    def __init__(self) -> None:
        self.n = 0


_COUNTS: StateKey[_Counts] = StateKey("counts")
_SHARED: StateKey[_Shared] = StateKey("shared")


def test_clone_copies_state_data_and_shares_the_rest() -> None:
    state = CycleState()
    counts, shared = _Counts(3), _Shared()
    state.write(_COUNTS, counts)
    state.write(_SHARED, shared)
    for _ in range(2):  # the second clone takes the per-type answer found by the first
        copy = state.clone()
        assert copy.read(_COUNTS) is not counts
        assert copy.read(_COUNTS).n == 3
        assert copy.read(_SHARED) is shared
    assert counts.cloned == 2
