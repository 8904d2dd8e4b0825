"""The extension points of a profile: one enum shared by config, registry and runtime.

A `StrEnum` whose values are the config's camelCase spelling, so a point is also the key
KubeSchedulerConfiguration uses (`plugins.filter`), and each member knows the method a
plugin class defines for it and the label kube-scheduler's metrics use
(`scheduler_framework_extension_point_duration_seconds{extension_point="Filter"}`).
Members are declared in the order a pod meets them, the pod group cycle's last.
"""

from __future__ import annotations

from enum import StrEnum


class ExtensionPoint(StrEnum):
    PRE_ENQUEUE = "preEnqueue"
    QUEUE_SORT = "queueSort"
    PRE_FILTER = "preFilter"
    FILTER = "filter"
    POST_FILTER = "postFilter"
    PRE_SCORE = "preScore"
    SCORE = "score"
    RESERVE = "reserve"
    PERMIT = "permit"
    PRE_BIND = "preBind"
    BIND = "bind"
    POST_BIND = "postBind"
    # The pod group cycle's points (kube-scheduler 1.37 config.Plugins lists them last).
    PLACEMENT_GENERATE = "placementGenerate"
    PLACEMENT_SCORE = "placementScore"
    POD_GROUP_POST_FILTER = "podGroupPostFilter"

    @property
    def method(self) -> str:
        """The plugin method implementing this point (`pre_filter`; `less` for QueueSort)."""
        return _METHODS[self]

    @property
    def label(self) -> str:
        """kube-scheduler's name for the point in metrics and messages (`PreFilter`)."""
        return self.value[0].upper() + self.value[1:]


_METHODS: dict[ExtensionPoint, str] = {
    ExtensionPoint.PRE_ENQUEUE: "pre_enqueue",
    ExtensionPoint.QUEUE_SORT: "less",
    ExtensionPoint.PRE_FILTER: "pre_filter",
    ExtensionPoint.FILTER: "filter",
    ExtensionPoint.POST_FILTER: "post_filter",
    ExtensionPoint.PRE_SCORE: "pre_score",
    ExtensionPoint.SCORE: "score",
    ExtensionPoint.RESERVE: "reserve",
    ExtensionPoint.PERMIT: "permit",
    ExtensionPoint.PRE_BIND: "pre_bind",
    ExtensionPoint.BIND: "bind",
    ExtensionPoint.POST_BIND: "post_bind",
    ExtensionPoint.PLACEMENT_GENERATE: "generate_placements",
    ExtensionPoint.PLACEMENT_SCORE: "score_placement",
    ExtensionPoint.POD_GROUP_POST_FILTER: "pod_group_post_filter",
}
