"""Volume plugins: VolumeBinding refuses claim-backed pods; the other three never reject."""

from __future__ import annotations

from typing import Any

import pytest

from asched.api import Pod, decode_pod
from asched.framework.cycle_state import CycleState
from asched.framework.registry import ArgsError
from asched.framework.status import Code
from asched.plugins.volumes import (
    ERR_REASON_PVC,
    NodeVolumeLimits,
    VolumeBinding,
    VolumeBindingArgs,
    VolumeRestrictions,
    VolumeZone,
)
from tests.builders import make_node, make_pod
from tests.unit.plugins.fakes import FakeHandle, node_info


def with_volume(source: str, body: dict[str, Any] | None = None) -> Pod:
    raw = make_pod("p").raw()
    raw["spec"]["volumes"] = [{"name": "v", source: body or {}}]
    return decode_pod(raw)


@pytest.mark.parametrize(
    ("pod", "rejected"),
    [
        pytest.param(make_pod("p").obj(), False, id="no-volumes"),
        pytest.param(make_pod("p").pvc("data").obj(), True, id="persistent-volume-claim"),
        pytest.param(
            with_volume("ephemeral", {"volumeClaimTemplate": {"spec": {}}}),
            True,
            id="generic-ephemeral",
        ),
        pytest.param(with_volume("emptyDir"), False, id="empty-dir"),
        pytest.param(with_volume("configMap", {"name": "cm"}), False, id="config-map"),
        pytest.param(with_volume("secret", {"secretName": "s"}), False, id="secret"),
        pytest.param(with_volume("projected", {"sources": []}), False, id="projected"),
        pytest.param(with_volume("downwardAPI", {"items": []}), False, id="downward-api"),
        pytest.param(with_volume("hostPath", {"path": "/tmp"}), False, id="host-path"),
    ],
)
def test_volume_binding_pre_filter(pod: Pod, rejected: bool) -> None:
    plugin = VolumeBinding(None, FakeHandle())
    result, st = plugin.pre_filter(CycleState(), pod, [])
    assert result is None
    assert st is not None
    if rejected:
        assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_PVC,))
    else:
        assert st.code == Code.SKIP
    # Filter, reached only when PreFilter is disabled, gives the same verdict.
    assert (plugin.filter(CycleState(), pod, node_info(make_node("n1").obj())) is None) != rejected


async def test_volume_binding_reserve_and_pre_bind_are_no_ops() -> None:
    plugin = VolumeBinding(None, FakeHandle())
    pod = make_pod("p").obj()
    assert plugin.reserve(CycleState(), pod, "n1") is None
    plugin.unreserve(CycleState(), pod, "n1")
    assert await plugin.pre_bind(CycleState(), pod, "n1") is None


@pytest.mark.parametrize("plugin_type", [VolumeRestrictions, NodeVolumeLimits, VolumeZone])
def test_placeholders_accept_everything(plugin_type: Any) -> None:
    plugin = plugin_type(None, FakeHandle())
    pod = make_pod("p").pvc("data").obj()
    _, st = plugin.pre_filter(CycleState(), pod, [])
    assert (st.code, st.plugin) == (Code.SKIP, plugin_type.NAME)
    assert plugin.filter(CycleState(), pod, node_info(make_node("n1").obj())) is None
    assert plugin.events_to_register() == ()


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param({}, VolumeBindingArgs(600, None), id="default"),
        pytest.param({"bindTimeoutSeconds": 30}, VolumeBindingArgs(30, None), id="timeout"),
    ],
)
def test_volume_binding_args(raw: dict[str, Any], want: VolumeBindingArgs) -> None:
    assert VolumeBindingArgs.from_dict(raw, "args") == want


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        pytest.param({"bindTimeoutSeconds": -1}, "args.bindTimeoutSeconds", id="negative"),
        pytest.param({"shape": []}, "args.shape", id="empty-shape"),
        pytest.param({"foo": 1}, "args.foo", id="unknown-field"),
    ],
)
def test_volume_binding_args_invalid(raw: dict[str, Any], path: str) -> None:
    with pytest.raises(ArgsError) as exc:
        VolumeBindingArgs.from_dict(raw, "args")
    assert exc.value.path == path
