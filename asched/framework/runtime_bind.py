"""The reserving and binding side of the framework runtime: Reserve, Unreserve, Permit,
PlacementFeasible, WaitOnPermit, PreBind, Bind and PostBind.

Follows kube-scheduler's frameworkImpl RunReservePluginsReserve, RunReservePluginsUnreserve,
RunPermitPlugins, RunPlacementFeasiblePlugins, WaitOnPermit, RunPreBindPlugins,
RunBindPlugins and RunPostBindPlugins.

A PreBind or Bind plugin that lets a request failure (asched.client.protocol's
RequestError) escape gets an Error status, as for any other error, but without the crash
report (RuntimeBase._request_failed): such failures are routine (a restarted API server,
a 409), not bugs.
"""

from __future__ import annotations

import time

from asched.api import Pod
from asched.client.protocol import REQUEST_ERRORS
from asched.framework.cycle_state import CycleState
from asched.framework.interfaces import (
    BindPlugin,
    PermitPlugin,
    PlacementFeasiblePlugin,
    PostBindPlugin,
    PreBindPlugin,
    PreBindPreFlightPlugin,
    ReservePlugin,
)
from asched.framework.runtime_base import RuntimeBase
from asched.framework.status import Code, Status, error, wrap_error
from asched.framework.waiting import WaitingPod, WaitingPods

# kube-scheduler's maxTimeout for a Permit plugin's Wait.
MAX_PERMIT_TIMEOUT = 15 * 60.0


class BindRunner(RuntimeBase):
    """Runs the extension points from reserving a node to binding the pod to it."""

    reserve_plugins: list[ReservePlugin]
    permit_plugins: list[PermitPlugin]
    placement_feasible_plugins: list[PlacementFeasiblePlugin]
    pre_bind_plugins: list[PreBindPlugin]
    pre_bind_pre_flights: list[PreBindPreFlightPlugin | None]  # per PreBind plugin
    bind_plugins: list[BindPlugin]
    post_bind_plugins: list[PostBindPlugin]
    waiting_pods: WaitingPods

    # ---- Reserve / Permit -----------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = None
        for p in self.reserve_plugins:
            try:
                st = p.reserve(state, pod, node_name)
            except Exception as exc:
                self._crashed(plugin=p.name, point="Reserve", pod=pod.key)
                st = error(exc, p.name)
            if st is not None and not st.is_success():
                status = st.with_plugin(p.name)
                if not st.is_rejected():
                    status = wrap_error(f'running Reserve plugin "{p.name}"', status)
                break
        self._point("Reserve", status, start)
        return status

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        start = time.perf_counter()
        for p in reversed(self.reserve_plugins):
            try:
                p.unreserve(state, pod, node_name)
            except Exception:
                self._crashed(plugin=p.name, point="Unreserve", pod=pod.key)
        self._point("Unreserve", None, start)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Success, a rejection, or Wait (the pod is then parked in waiting_pods)."""
        start = time.perf_counter()
        timeouts: dict[str, float] = {}
        status: Status | None = None
        for p in self.permit_plugins:
            try:
                st, timeout = p.permit(state, pod, node_name)
            except Exception as exc:
                self._crashed(plugin=p.name, point="Permit", pod=pod.key)
                status = wrap_error(f'running Permit plugin "{p.name}"', error(exc, p.name))
                break
            if st is None or st.is_success():
                continue
            if st.code == Code.WAIT:
                timeouts[p.name] = min(max(timeout, 0.0), MAX_PERMIT_TIMEOUT)
                continue
            status = st.with_plugin(p.name)
            if st.is_rejected():
                status = Status(Code.UNSCHEDULABLE, st.reasons, p.name)
            else:
                status = wrap_error(f'running Permit plugin "{p.name}"', status)
            break
        if status is None and timeouts:
            self.waiting_pods.add(WaitingPod(pod, node_name, timeouts, self.clock.now()))
            status = Status(Code.WAIT, ("one or more plugins prevented scheduling the pod",), "")
        self._point("Permit", status, start)
        return status

    def run_placement_feasible(
        self, namespace: str, group: str, scheduled: int, remaining: int
    ) -> Status | None:
        """RunPlacementFeasiblePlugins: the first Unschedulable ends it; a Wait is kept and
        the next plugin asked; an error or other code becomes an Error status."""
        status: Status | None = None
        for p in self.placement_feasible_plugins:
            try:
                st = p.placement_feasible(namespace, group, scheduled, remaining)
            except Exception as exc:
                self._crashed(plugin=p.name, point="PlacementFeasible", pod=f"{namespace}/{group}")
                st = error(exc, p.name)
            if st is None or st.is_success():
                continue
            if st.code == Code.WAIT:
                status = st.with_plugin(p.name)
                continue
            if st.code == Code.UNSCHEDULABLE:
                return st.with_plugin(p.name)
            if st.code == Code.ERROR:
                return wrap_error("running PlacementFeasible plugin", st, p.name)
            return error(
                f"unexpected status from PlacementFeasible plugin: {st.code_name()}", p.name
            )
        return status

    async def wait_on_permit(self, pod: Pod) -> Status | None:
        wp = self.waiting_pods.get(pod.uid)
        if wp is None:
            return None
        started = self.clock.now()
        try:
            st = await wp.wait(self.clock)
        finally:
            self.waiting_pods.remove(pod.uid)
        m = self._services.metrics
        if m is not None:
            m.permit_wait(st.code_name(), self.clock.now() - started)
        return None if st.is_success() else st

    # ---- binding cycle ---------------------------------------------------------------
    def run_pre_bind_pre_flights(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        """RunPreBindPreFlights: None (Success) when some PreBind plugin will act for this
        pod, Skip when none will, an Error status when one failed or answered anything but
        Success, Skip or Error. Plugins that said Skip are left out of PreBind
        (SetSkipPreBindPlugins). A plugin without the method counts as Success (see
        PreBindPreFlightPlugin). kube-scheduler also records which plugins may run in
        parallel and runs PreBind in groups; asched runs them one after another, which only
        changes how long a pod with several PreBind plugins takes."""
        start = time.perf_counter()
        status: Status | None = Status(Code.SKIP)
        skipped: set[str] = set()
        for p in self.pre_bind_pre_flights:
            if p is None:
                status = None
                continue
            t = time.perf_counter()
            try:
                st = p.pre_bind_pre_flight(state, pod, node_name)
            except Exception as exc:
                self._crashed(plugin=p.name, point="PreBindPreFlight", pod=pod.key)
                st = error(exc, p.name)
            self._plugin(p.name, "PreBindPreFlight", st, t)
            code = Code.SUCCESS if st is None else st.code
            if code == Code.ERROR:
                assert st is not None
                status = wrap_error(f'running PreBindPreFlight "{p.name}"', st, p.name)
                break
            if code == Code.SUCCESS:
                status = None
            elif code == Code.SKIP:
                skipped.add(p.name)
            else:
                assert st is not None
                status = error(
                    f'PreBindPreFlight {p.name} returned "{st.code_name()}", which is '
                    "unsupported. It is supposed to return Success, Skip, or Error status",
                    p.name,
                )
                break
        else:
            state.skip_pre_bind_plugins = skipped
        self._point("PreBindPreFlight", status, start)
        return status

    async def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = None
        for p in self.pre_bind_plugins:
            if p.name in state.skip_pre_bind_plugins:
                continue
            try:
                st = await p.pre_bind(state, pod, node_name)
            except REQUEST_ERRORS as exc:
                st = self._request_failed(
                    exc, plugin=p.name, point="PreBind", pod=pod.key, node=node_name
                )
            except Exception as exc:
                self._crashed(plugin=p.name, point="PreBind", pod=pod.key)
                st = error(exc, p.name)
            if st is not None and st.code not in (Code.SUCCESS, Code.SKIP):
                status = st.with_plugin(p.name)
                if not st.is_rejected():
                    status = wrap_error(f'running PreBind plugin "{p.name}"', status)
                break
        self._point("PreBind", status, start)
        return status

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        start = time.perf_counter()
        status: Status | None = Status(Code.SKIP)
        for p in self.bind_plugins:
            try:
                st = await p.bind(state, pod, node_name)
            except REQUEST_ERRORS as exc:
                st = self._request_failed(
                    exc, plugin=p.name, point="Bind", pod=pod.key, node=node_name
                )
            except Exception as exc:
                self._crashed(plugin=p.name, point="Bind", pod=pod.key)
                st = error(exc, p.name)
            if st is not None and st.code == Code.SKIP:
                continue
            status = None if st is None or st.is_success() else st.with_plugin(p.name)
            if status is not None and not status.is_rejected():
                status = wrap_error(f'running Bind plugin "{p.name}"', status)
            break
        self._point("Bind", status, start)
        return status

    async def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        start = time.perf_counter()
        for p in self.post_bind_plugins:
            try:
                await p.post_bind(state, pod, node_name)
            except Exception:
                self._crashed(plugin=p.name, point="PostBind", pod=pod.key)
        self._point("PostBind", None, start)
