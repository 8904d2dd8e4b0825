"""The unschedulable pool: pods that failed and wait for an event, and gated pods.

Mirrors kube-scheduler's unschedulablePods, plus an index by (profile, plugin): a pod is
filed under each plugin that rejected it (or, when gated, under its gating plugin), so
an event only visits the pods whose rejecting plugins registered it. With 10k pending
pods and hundreds of node events a second, a scan of the whole pool per event would
cost more than scheduling. Within each key, pods of a PodGroup are also filed by group
("namespace/name": the native group of spec.schedulingGroup, and the Coscheduling group of
the pod-group label, under both when a pod names two), for events whose registration has a
scope (ClusterEventWithHint.scope): a new gang member then visits its own gang's pods only.

Guarantees: one entry per pod UID; the index always matches the plugin sets the pod had
when it was added (change them only by re-adding); `gated` counts gated pods; `on_change`
hears of every pod filed (+1) and unfiled (-1) under its plugins, which keeps
scheduler_unschedulable_pods{plugin, profile} equal to the index, as kube-scheduler's
queue keeps it equal to its unschedulablePods (gated pods count under their gate).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from asched.api.podgroup import pod_group_key
from asched.framework.types import QueuedPodInfo

# Index bucket for pods rejected without a named plugin: any event of interest may help.
ANY_PLUGIN = ""

_Key = tuple[str, str]  # (profile, plugin)
# (plugins, profile, +1 when filed or -1 when unfiled)
OnChange = Callable[[Sequence[str], str, int], None]


def _group_keys(qpi: QueuedPodInfo) -> tuple[str, ...]:
    pod = qpi.pod
    native = f"{pod.namespace}/{pod.scheduling_group}" if pod.scheduling_group else ""
    labelled = pod_group_key(pod)
    return tuple(dict.fromkeys(k for k in (native, labelled) if k))


def _index_keys(qpi: QueuedPodInfo) -> tuple[_Key, ...]:
    profile = qpi.pod.scheduler_name
    if qpi.gating_plugin:
        return ((profile, qpi.gating_plugin),)
    rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
    if not rejectors:
        return ((profile, ANY_PLUGIN),)
    return tuple((profile, plugin) for plugin in sorted(rejectors))


class UnschedulablePool:
    def __init__(self, on_change: OnChange | None = None) -> None:
        self._on_change = on_change
        self._pods: dict[str, QueuedPodInfo] = {}
        # uid -> (index keys, gated, group) as filed, so removal never depends on later
        # mutation.
        self._filed: dict[str, tuple[tuple[_Key, ...], bool, tuple[str, ...]]] = {}
        self._index: dict[_Key, dict[str, QueuedPodInfo]] = {}
        # (profile, plugin, "namespace/podgroup") -> the index's pods of that group.
        self._by_group: dict[tuple[str, str, str], dict[str, QueuedPodInfo]] = {}
        self._per_profile: dict[str, int] = {}
        self.gated = 0

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._pods.get(uid)

    def pods(self) -> list[QueuedPodInfo]:
        return list(self._pods.values())

    def profiles(self) -> list[str]:
        return list(self._per_profile)

    def add(self, qpi: QueuedPodInfo) -> bool:
        """Add or re-file the pod; True if it was not in the pool before."""
        fresh = self.remove(qpi.uid) is None
        uid = qpi.uid
        keys = _index_keys(qpi)
        gated = bool(qpi.gating_plugin)
        groups = _group_keys(qpi)
        self._pods[uid] = qpi
        self._filed[uid] = (keys, gated, groups)
        for key in keys:
            self._index.setdefault(key, {})[uid] = qpi
            for group in groups:
                self._by_group.setdefault((*key, group), {})[uid] = qpi
        profile = qpi.pod.scheduler_name
        self._per_profile[profile] = self._per_profile.get(profile, 0) + 1
        if gated:
            self.gated += 1
        if self._on_change is not None:
            self._notify(keys, +1)
        return fresh

    def _notify(self, keys: tuple[_Key, ...], delta: int) -> None:
        assert self._on_change is not None
        plugins = [plugin for _, plugin in keys if plugin != ANY_PLUGIN]
        if plugins:
            self._on_change(plugins, keys[0][0], delta)

    def remove(self, uid: str) -> QueuedPodInfo | None:
        qpi = self._pods.pop(uid, None)
        if qpi is None:
            return None
        keys, gated, groups = self._filed.pop(uid)
        for key in keys:
            bucket = self._index[key]
            del bucket[uid]
            if not bucket:
                del self._index[key]
            for group in groups:
                grouped = (*key, group)
                members = self._by_group[grouped]
                del members[uid]
                if not members:
                    del self._by_group[grouped]
        profile = keys[0][0]
        left = self._per_profile[profile] - 1
        if left:
            self._per_profile[profile] = left
        else:
            del self._per_profile[profile]
        if gated:
            self.gated -= 1
        if self._on_change is not None:
            self._notify(keys, -1)
        return qpi

    def filed_under(
        self, keys: Iterable[_Key], scopes: Mapping[_Key, frozenset[str]] | None = None
    ) -> list[QueuedPodInfo]:
        """Pods filed under any of these (profile, plugin) keys, each once.

        For a key in `scopes`, only its pods of the PodGroups named there.
        """
        found: dict[str, QueuedPodInfo] = {}
        index = self._index
        for key in keys:
            groups = scopes.get(key) if scopes else None
            if groups is None:
                bucket = index.get(key)
                if bucket:
                    found.update(bucket)
                continue
            for group in groups:
                members = self._by_group.get((*key, group))
                if members:
                    found.update(members)
        return list(found.values())
