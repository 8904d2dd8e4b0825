"""DefaultBinder: one binding per pod; request failures are left to the framework (which
makes them Error statuses: tests/unit/framework/test_runtime.py)."""

from __future__ import annotations

import pytest

from asched.client.protocol import ApiError
from asched.framework.cycle_state import CycleState
from asched.plugins.defaultbinder import DefaultBinder
from tests.builders import make_pod
from tests.unit.plugins.fakes import FakeClient, FakeHandle


async def test_binds_with_namespace_name_uid_and_node() -> None:
    client = FakeClient()
    pod = make_pod("web", namespace="shop").uid("uid-123").obj()
    st = await DefaultBinder(None, FakeHandle(client=client)).bind(CycleState(), pod, "n7")
    assert st is None
    assert client.bindings == [("shop", "web", "uid-123", "n7")]


async def test_api_error_reaches_the_framework_unwrapped() -> None:
    client = FakeClient()
    client.fail_with = ApiError(
        409,
        "Conflict",
        'pod "web" is already assigned to node "n1"',
        "POST",
        "/api/v1/namespaces/shop/pods/web/binding",
    )
    pod = make_pod("web", namespace="shop").obj()
    with pytest.raises(ApiError) as caught:
        await DefaultBinder(None, FakeHandle(client=client)).bind(CycleState(), pod, "n7")
    assert caught.value is client.fail_with
    assert client.bindings == []
