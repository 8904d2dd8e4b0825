"""One HTTP extender: kube-scheduler's HTTPExtender (pkg/scheduler/extender.go).

Each verb the config names is a POST of the extender/v1 JSON to `<urlPrefix>/<verb>`; a
verb left empty is not called (Filter passes every node, Prioritize scores every node 0).
`is_interested` is the managedResources rule: an extender with none listed sees every
pod, else only pods whose containers or init containers ask for one of them. A call that
fails raises ExtenderError; whether that fails the pod is the caller's decision
(asched.extender.chain, from `ignorable`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from asched.api import Pod
from asched.config.model import ExtenderConfig
from asched.extender import wire
from asched.extender.objects import WireObjects
from asched.extender.transport import Poster
from asched.framework.extenders import ExtenderError, Victims
from asched.framework.nodeinfo import NodeInfo

T = TypeVar("T")


class HTTPExtender:
    def __init__(self, config: ExtenderConfig, transport: Poster, objects: WireObjects) -> None:
        self.config = config
        self.weight = config.weight
        self._transport = transport
        self._objects = objects
        self._managed = frozenset(r.name for r in config.managed_resources)

    @property
    def name(self) -> str:
        """The urlPrefix, which is how kube-scheduler names an extender."""
        return self.config.url_prefix

    @property
    def ignorable(self) -> bool:
        return self.config.ignorable

    @property
    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    @property
    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def is_interested(self, pod: Pod) -> bool:
        """IsInterested. Only requests are looked at, where Go also reads limits: the API
        server copies an extended resource's limit into its request when none is given
        and refuses the two differing, so a pod asks for one exactly when it has a request."""
        if not self._managed:
            return True
        return any(r.resource in self._managed for r in pod.extended_requests)

    def _args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> bytes:
        names = [n.name for n in nodes]
        if self.config.node_cache_capable:
            return wire.extender_args(self._objects.pod(pod), nodes=None, names=names)
        node_json = [self._objects.node(name) for name in names]
        return wire.extender_args(self._objects.pod(pod), nodes=node_json, names=None)

    async def filter(
        self, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """Filter: the nodes that passed, then failedNodes and failedAndUnresolvableNodes.

        The nodes that passed are the caller's NodeInfos, found by name. Where
        kube-scheduler, for an extender that answers with full Nodes, makes fresh
        NodeInfos holding only the Node (so Score plugins see those nodes empty), asched
        keeps its own, and a node it did not send is an error either way."""
        if not self.is_filter:
            return list(nodes), {}, {}
        body = await self._transport.post(self.config.filter_verb, self._args(pod, nodes))
        result = _decode(wire.decode_filter_result, body)
        if result.error:
            raise ExtenderError(result.error)
        by_name = {n.name: n for n in nodes}
        names = result.node_names if self.config.node_cache_capable else None
        if names is None:
            names = result.nodes
        passed: list[NodeInfo] = []
        for name in names or ():
            ni = by_name.get(name)
            if ni is None:
                raise ExtenderError(
                    f'extender "{self.name}" claims a filtered node "{name}" which is not '
                    "found in the input node list"
                )
            passed.append(ni)
        return passed, result.failed_nodes, result.failed_and_unresolvable

    async def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> list[tuple[str, int]]:
        """Prioritize: (host, score) as the extender answered, scores 0..10 unweighted."""
        if not self.is_prioritizer:
            return [(n.name, 0) for n in nodes]
        body = await self._transport.post(self.config.prioritize_verb, self._args(pod, nodes))
        return _decode(wire.decode_host_priorities, body)

    async def bind(self, pod: Pod, node: str) -> None:
        """Bind: the extender binds the pod; its Error (or a failed call) raises."""
        if not self.is_binder:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = wire.binding_args(pod.namespace, pod.name, pod.uid, node)
        body = await self._transport.post(self.config.bind_verb, args)
        error = _decode(wire.decode_binding_result, body)
        if error:
            raise ExtenderError(error)

    async def process_preemption(
        self,
        pod: Pod,
        victims: Mapping[str, Victims],
        node_pods: Callable[[str], Sequence[Pod] | None],
    ) -> dict[str, Victims | None]:
        """ProcessPreemption: the candidates the extender keeps, with its victims turned
        back into pods from *node_pods* (a node's pods), as convertToVictims does.
        A node the extender maps to null stays None for the caller to judge."""
        if not self.supports_preemption:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.name} but run into "
                "ProcessPreemption"
            )
        pod_json = self._objects.pod(pod)
        if self.config.node_cache_capable:
            meta = {
                node: wire.MetaVictims([p.uid for p in pods], pdb)
                for node, (pods, pdb) in victims.items()
            }
            args = wire.preemption_args(pod_json, None, meta)
        else:
            full = {
                node: ([self._objects.pod(p) for p in pods], pdb)
                for node, (pods, pdb) in victims.items()
            }
            args = wire.preemption_args(pod_json, full, None)
        body = await self._transport.post(self.config.preempt_verb, args)
        result = _decode(wire.decode_preemption_result, body)
        out: dict[str, Victims | None] = {}
        for node, meta_victims in result.items():
            on_node = node_pods(node)
            if on_node is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node}"')
            if meta_victims is None:
                out[node] = None
                continue
            by_uid = {p.uid: p for p in on_node}
            pods = []
            for uid in meta_victims.pods:
                found = by_uid.get(uid)
                if found is None:
                    raise ExtenderError(
                        f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on "
                        f"node: {node}, but the pod is not found on that node"
                    )
                pods.append(found)
            out[node] = (pods, meta_victims.num_pdb_violations)
        return out

    async def close(self) -> None:
        await self._transport.close()


def _decode(fn: Callable[[bytes], T], body: bytes) -> T:
    try:
        return fn(body)
    except wire.WireError as exc:
        raise ExtenderError(str(exc)) from None
