"""asched against the session's cluster: the one way an integration test starts it.

Every end-to-end test does the same few things around a real `asched run` process: write
a KubeSchedulerConfiguration, start the process with the scheduler's identity, wait until
it is ready, create pods in the test's namespace, wait for them to be bound or for an
Event about them, and kill the process at the end. `AschedHarness` (the `asched`
fixture of tests/integration/conftest.py) does each of those once, so a test reads as the
behaviour it checks. It only starts and observes: every outcome is still read from the
real API server, and a test that must do something else to the process (SIGKILL it,
SIGTERM it, read its logs or metrics) does it on the AschedProcess that `run` yields.
"""

from __future__ import annotations

import ssl as ssllib
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import yaml

from asched.localcluster import ClusterClient, JsonObject, LocalCluster
from tests.integration.asched_proc import AschedProcess, running_asched
from tests.integration.helpers import poll


def profile_config(
    scheduler_name: str,
    *,
    qps: int = 0,
    burst: int = 0,
    extenders: Sequence[Mapping[str, Any]] = (),
    leader_election: Mapping[str, Any] | None = None,
) -> str:
    """A KubeSchedulerConfiguration (YAML) with one default profile named *scheduler_name*.

    *qps*/*burst* set clientConnection (either left 0 keeps kube-scheduler's 50/100),
    *extenders* the extenders list, *leader_election* the leaderElection block."""
    config: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
    }
    client = {key: n for key, n in (("qps", qps), ("burst", burst)) if n}
    if client:
        config["clientConnection"] = client
    if leader_election is not None:
        config["leaderElection"] = dict(leader_election)
    config["profiles"] = [{"schedulerName": scheduler_name}]
    if extenders:
        config["extenders"] = [dict(e) for e in extenders]
    return yaml.safe_dump(config, sort_keys=False)


def feature_gate_flags(gates: Mapping[str, bool]) -> list[str]:
    """`--feature-gates A=true,B=false`, as `asched run` (and kube-scheduler) take them."""
    if not gates:
        return []
    return ["--feature-gates", ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())]


@dataclass
class AschedHarness:
    """One test's asched processes on the session cluster, and what they did in its namespace.

    `run` starts a process and yields it once /readyz answers; every process gets a log
    file of its own under the test's tmp_path (asched-0.log, asched-1.log, ...), so a
    restarted scheduler's records never mix with its predecessor's.
    """

    cluster: LocalCluster
    admin: ClusterClient
    namespace: str
    tmp_path: Path
    _started: int = field(default=0, init=False)

    @asynccontextmanager
    async def run(
        self,
        config: Path | str | None = None,
        *,
        feature_gates: Mapping[str, bool] | None = None,
        kubeconfig: Path | None = None,
        args: Sequence[str] = (),
        secure: bool = False,
        ssl: ssllib.SSLContext | None = None,
    ) -> AsyncIterator[AschedProcess]:
        """`async with harness.run(config) as proc`: asched running until the block ends
        (then SIGKILLed, if it still runs).

        *config* is a file, or the YAML text to write to one (profile_config makes it);
        None runs without --config. *kubeconfig* defaults to the scheduler's identity
        (system:asched, manifests/rbac.yaml); a test that reaches the API server another
        way (through a fault proxy, as a ServiceAccount) passes its own. *args* are added
        to `asched run`'s, *secure*/*ssl* as AschedProcess takes them."""
        n = self._started
        self._started += 1
        if isinstance(config, str):
            path = self.tmp_path / f"config-{n}.yaml"
            await anyio.Path(path).write_text(config)
            config = path
        async with running_asched(
            config,
            kubeconfig or self.cluster.scheduler_kubeconfig,
            self.tmp_path / f"asched-{n}.log",
            [*args, *feature_gate_flags(feature_gates or {})],
            secure=secure,
            ssl=ssl,
        ) as proc:
            yield proc

    # ---- the test's namespace, as the API server has it ----------------------------------

    @property
    def pods_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/pods"

    async def create_pod(self, body: JsonObject) -> JsonObject:
        """POST a pod manifest to the namespace; the created object."""
        return await self.admin.post(self.pods_path, body)

    async def pods(self) -> list[JsonObject]:
        items: list[JsonObject] = (await self.admin.get(self.pods_path))["items"]
        return items

    async def node_of(self, pod: str) -> str | None:
        """The pod's nodeName, None while it is unbound."""
        body = await self.admin.get(f"{self.pods_path}/{pod}")
        node: str = body["spec"].get("nodeName", "")
        return node or None

    async def wait_node(self, pod: str, within: float = 60) -> str:
        """The pod's nodeName once it is bound (TimeoutError after *within* s)."""
        with anyio.fail_after(within):
            return await poll(lambda: self.node_of(pod), interval=0.2)

    async def wait_bound(self, names: Iterable[str], within: float = 60) -> dict[str, str]:
        """pod -> node once every pod of *names* is bound (TimeoutError after *within* s)."""
        want = set(names)

        async def check() -> dict[str, str] | None:
            bound = {
                p["metadata"]["name"]: p["spec"].get("nodeName", "")
                for p in await self.pods()
                if p["metadata"]["name"] in want
            }
            return bound if all(bound.get(n) for n in want) else None

        with anyio.fail_after(within):
            return await poll(check, interval=0.2)

    async def events(self, name: str, kind: str = "") -> list[JsonObject]:
        """events.k8s.io/v1 Events of the namespace regarding *name* (of *kind*, if given)."""
        selector = f"regarding.name={name}" + (f",regarding.kind={kind}" if kind else "")
        body = await self.admin.get(
            f"/apis/events.k8s.io/v1/namespaces/{self.namespace}/events",
            params={"fieldSelector": selector},
        )
        items: list[JsonObject] = body["items"]
        return items

    async def wait_event(
        self, name: str, reason: str, within: float = 30, kind: str = ""
    ) -> JsonObject:
        """The first Event regarding *name* (of *kind*) with *reason*, once there is one."""

        async def check() -> JsonObject | None:
            for e in await self.events(name, kind):
                if e.get("reason") == reason:
                    return e
            return None

        with anyio.fail_after(within):
            return await poll(check, interval=0.2)
