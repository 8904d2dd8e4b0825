"""kube-scheduler's scheduler_perf performance-config.yaml files, decoded and checked.

The files are read as upstream reads them (scheduler_perf.go getTestCases and op
UnmarshalJSON): a list of test cases, each with a workload template of ops and a list of
workloads whose params fill the template. Field names match case-insensitively, as Go's
encoding/json does, and an unknown field is an error, as with yaml.UnmarshalStrict. Paths
in the file are relative to the file's directory (the Go test's working directory).

An op code outside the ones this executor runs (SUPPORTED) makes the test case unusable:
selecting any of its workloads fails with an error that names the op code, the op's index
and the test case, instead of running something other than what upstream runs.

Parameters are resolved per workload as patchParams does: `countParam: $initNodes` reads
the workload's param as a number, `templateParams` values `$name` or `$name|default`
(default in YAML) are substituted, and a param the workload defines but no op uses is an
error (runWorkload's unusedParams).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from benchmarks.scheduler_perf.gotemplate import Value

TemplateParams = Mapping[str, Value]


class ConfigError(ValueError):
    """A performance-config.yaml that upstream would refuse too, or that we cannot run."""


class UnsupportedOpError(ConfigError):
    """An op code this executor does not run (names it and where it is)."""


# -- ops ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateNodes:
    count: int = 0
    count_param: str = ""
    node_template_path: Path | None = None
    node_allocatable_strategy: Mapping[str, Any] | None = None
    label_node_prepare_strategy: Mapping[str, Any] | None = None
    unique_node_label_strategy: Mapping[str, Any] | None = None
    template_params: TemplateParams = field(default_factory=dict)


@dataclass(frozen=True)
class CreatePods:
    count: int = 0
    count_param: str = ""
    count_multiplier_param: str = ""
    steady_state: bool = False
    steady_state_param: str = ""
    duration_s: float = 0.0
    duration_param: str = ""
    collect_metrics: bool = False
    namespace: str | None = None
    pod_template_path: Path | None = None
    skip_wait_to_completion: bool = False
    persistent_volume_template_path: Path | None = None
    persistent_volume_claim_template_path: Path | None = None
    template_params: TemplateParams = field(default_factory=dict)
    signature_batch_size: int = 0
    signature_batch_size_param: str = ""


@dataclass(frozen=True)
class CreateAny:
    template_path: Path
    namespace: str = ""
    count: int | None = None
    count_param: str = ""
    template_params: TemplateParams = field(default_factory=dict)


@dataclass(frozen=True)
class CreateNamespaces:
    prefix: str
    count: int = 0
    count_param: str = ""
    namespace_template_path: Path | None = None


@dataclass(frozen=True)
class CreatePodGroups:
    namespace: str
    template_path: Path
    count: int = 0
    count_param: str = ""
    template_params: TemplateParams = field(default_factory=dict)


@dataclass(frozen=True)
class CreatePodSets:
    namespace_prefix: str
    create_pods: CreatePods
    count: int = 0
    count_param: str = ""


@dataclass(frozen=True)
class UpdateAny:
    template_path: Path
    namespace: str = ""
    count: int | None = None
    count_param: str = ""
    update_per_second: int = 0
    subresources: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeletePods:
    namespace: str
    label_selector: Mapping[str, str] = field(default_factory=dict)
    skip_wait_to_completion: bool = False
    delete_pods_per_second: int = 0


@dataclass(frozen=True)
class Churn:
    mode: str
    template_paths: tuple[Path, ...]
    number: int = 0
    interval_ms: int = 0
    namespace: str | None = None


@dataclass(frozen=True)
class Barrier:
    namespaces: tuple[str, ...] = ()
    label_selector: Mapping[str, str] = field(default_factory=dict)
    stage_requirement: str = "Scheduled"


@dataclass(frozen=True)
class AllocResourceClaims:
    namespace: str = ""


@dataclass(frozen=True)
class StartCollectingMetrics:
    namespaces: tuple[str, ...]
    name: str = ""
    label_selector: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StopCollectingMetrics:
    pass


Op = (
    CreateNodes
    | CreatePods
    | CreateAny
    | CreateNamespaces
    | CreatePodGroups
    | CreatePodSets
    | UpdateAny
    | DeletePods
    | Churn
    | Barrier
    | AllocResourceClaims
    | StartCollectingMetrics
    | StopCollectingMetrics
)

#: Every op code upstream's 1.37.2 executor knows (scheduler_perf.go op.UnmarshalJSON).
UPSTREAM_OPCODES = frozenset(
    {
        "allocResourceClaims",
        "createAny",
        "createNodes",
        "createNamespaces",
        "createPods",
        "createPodSets",
        "deletePods",
        "createResourceClaims",
        "churn",
        "updateAny",
        "barrier",
        "sleep",
        "startCollectingMetrics",
        "stopCollectingMetrics",
        "createPodGroups",
        "startCollectingProfile",
        "stopCollectingProfile",
    }
)
SUPPORTED = frozenset(
    {
        "createNodes",
        "createPods",
        "createAny",
        "createNamespaces",
        "createPodGroups",
        "createPodSets",
        "updateAny",
        "deletePods",
        "churn",
        "barrier",
        "allocResourceClaims",
        "startCollectingMetrics",
        "stopCollectingMetrics",
    }
)

# -- decoding --------------------------------------------------------------------------------


class _Fields:
    """One JSON object decoded like encoding/json into a struct: names match without
    regard to case, and (DisallowUnknownFields) a name the struct lacks is an error."""

    def __init__(self, raw: object, known: Sequence[str], where: str, base: Path) -> None:
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where}: expected an object, got {raw!r}")
        by_lower = {k.lower(): k for k in known}
        self.values: dict[str, object] = {}
        for key, value in raw.items():
            canonical = by_lower.get(str(key).lower())
            if canonical is None:
                raise ConfigError(f"{where}: unknown field {key!r}")
            self.values[canonical] = value
        self.where = where
        self.base = base

    def get(self, name: str, kind: type[_T], default: _T) -> _T:
        value = self.values.get(name)
        if value is None:
            return default
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)  # type: ignore[return-value]
        if kind is int and isinstance(value, float) and value.is_integer():
            return int(value)  # type: ignore[return-value]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ConfigError(f"{self.where}: {name} must be {kind.__name__}, got {value!r}")
        return value

    def text(self, name: str, default: str = "") -> str:
        return self.get(name, str, default)

    def path(self, name: str) -> Path | None:
        value = self.values.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ConfigError(f"{self.where}: {name} must be a path, got {value!r}")
        return (self.base / value).resolve()

    def strings(self, name: str) -> tuple[str, ...]:
        value = self.values.get(name) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{self.where}: {name} must be a list of strings")
        return tuple(value)

    def labels(self, name: str) -> dict[str, str]:
        value = self.values.get(name) or {}
        if not isinstance(value, Mapping):
            raise ConfigError(f"{self.where}: {name} must be a map of strings")
        return {str(k): str(v) for k, v in value.items()}

    def mapping(self, name: str) -> dict[str, Any] | None:
        value = self.values.get(name)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise ConfigError(f"{self.where}: {name} must be an object")
        return dict(value)


_T = TypeVar("_T")


def duration_seconds(text: str, where: str) -> float:
    """metav1.Duration / time.ParseDuration for the forms the files use (e.g. 10s, 1m30s)."""
    import re

    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    parts = re.findall(r"(\d+(?:\.\d*)?)(ns|us|µs|ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ConfigError(f"{where}: invalid duration {text!r}")
    return sum(float(n) * units[u] for n, u in parts)


def _create_pods(f: _Fields) -> CreatePods:
    duration = f.values.get("Duration")
    return CreatePods(
        count=f.get("Count", int, 0),
        count_param=f.text("CountParam"),
        count_multiplier_param=f.text("CountMultiplierParam"),
        steady_state=f.get("SteadyState", bool, False),
        steady_state_param=f.text("SteadyStateParam"),
        duration_s=duration_seconds(duration, f.where) if isinstance(duration, str) else 0.0,
        duration_param=f.text("DurationParam"),
        collect_metrics=f.get("CollectMetrics", bool, False),
        namespace=f.text("Namespace") or None,
        pod_template_path=f.path("PodTemplatePath"),
        skip_wait_to_completion=f.get("SkipWaitToCompletion", bool, False),
        persistent_volume_template_path=f.path("PersistentVolumeTemplatePath"),
        persistent_volume_claim_template_path=f.path("PersistentVolumeClaimTemplatePath"),
        template_params=f.mapping("TemplateParams") or {},
        signature_batch_size=f.get("SignatureBatchSize", int, 0),
        signature_batch_size_param=f.text("SignatureBatchSizeParam"),
    )


_CREATE_PODS_FIELDS = (
    "Opcode",
    "Count",
    "CountParam",
    "CountMultiplierParam",
    "SteadyState",
    "SteadyStateParam",
    "Duration",
    "DurationParam",
    "CollectMetrics",
    "Namespace",
    "PodTemplatePath",
    "SkipWaitToCompletion",
    "PersistentVolumeTemplatePath",
    "PersistentVolumeClaimTemplatePath",
    "TemplateParams",
    "SignatureBatchSize",
    "SignatureBatchSizeParam",
)


def decode_op(raw: object, where: str, base: Path) -> Op:
    """One op of a workload template; UnsupportedOpError for an op code we do not run."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: an op must be an object")
    opcode = next((v for k, v in raw.items() if str(k).lower() == "opcode"), None)
    if opcode not in UPSTREAM_OPCODES:
        raise ConfigError(f"{where}: unknown opcode {opcode!r}")
    if opcode not in SUPPORTED:
        raise UnsupportedOpError(f"{where}: op code {opcode!r} is not supported by this executor")

    def fields(*names: str) -> _Fields:
        return _Fields(raw, ("Opcode", *names), f"{where} ({opcode})", base)

    op: Op
    if opcode == "createNodes":
        f = fields(
            "Count",
            "CountParam",
            "NodeTemplatePath",
            "NodeAllocatableStrategy",
            "LabelNodePrepareStrategy",
            "UniqueNodeLabelStrategy",
            "TemplateParams",
        )
        op = CreateNodes(
            count=f.get("Count", int, 0),
            count_param=f.text("CountParam"),
            node_template_path=f.path("NodeTemplatePath"),
            node_allocatable_strategy=f.mapping("NodeAllocatableStrategy"),
            label_node_prepare_strategy=f.mapping("LabelNodePrepareStrategy"),
            unique_node_label_strategy=f.mapping("UniqueNodeLabelStrategy"),
            template_params=f.mapping("TemplateParams") or {},
        )
    elif opcode == "createPods":
        op = _create_pods(_Fields(raw, _CREATE_PODS_FIELDS, f"{where} ({opcode})", base))
    elif opcode == "createAny":
        f = fields("Namespace", "TemplatePath", "Count", "CountParam", "TemplateParams")
        template = f.path("TemplatePath")
        if template is None:
            raise ConfigError(f"{f.where}: TemplatePath must be set")
        count = f.values.get("Count")
        op = CreateAny(
            template_path=template,
            namespace=f.text("Namespace"),
            count=f.get("Count", int, 0) if count is not None else None,
            count_param=f.text("CountParam"),
            template_params=f.mapping("TemplateParams") or {},
        )
    elif opcode == "createNamespaces":
        f = fields("Prefix", "Count", "CountParam", "NamespaceTemplatePath")
        op = CreateNamespaces(
            prefix=f.text("Prefix"),
            count=f.get("Count", int, 0),
            count_param=f.text("CountParam"),
            namespace_template_path=f.path("NamespaceTemplatePath"),
        )
    elif opcode == "createPodGroups":
        f = fields("Namespace", "TemplatePath", "TemplateParams", "Count", "CountParam")
        template = f.path("TemplatePath")
        if template is None or not f.text("Namespace"):
            raise ConfigError(f"{f.where}: templatePath and namespace must be set")
        op = CreatePodGroups(
            namespace=f.text("Namespace"),
            template_path=template,
            count=f.get("Count", int, 0),
            count_param=f.text("CountParam"),
            template_params=f.mapping("TemplateParams") or {},
        )
    elif opcode == "createPodSets":
        f = fields("Count", "CountParam", "NamespacePrefix", "CreatePodsOp")
        inner = _Fields(
            f.values.get("CreatePodsOp") or {}, _CREATE_PODS_FIELDS, f"{f.where}.createPodsOp", base
        )
        op = CreatePodSets(
            namespace_prefix=f.text("NamespacePrefix"),
            create_pods=_create_pods(inner),
            count=f.get("Count", int, 0),
            count_param=f.text("CountParam"),
        )
    elif opcode == "updateAny":
        f = fields(
            "Namespace", "TemplatePath", "Count", "CountParam", "UpdatePerSecond", "Subresources"
        )
        template = f.path("TemplatePath")
        if template is None:
            raise ConfigError(f"{f.where}: TemplatePath must be set")
        count = f.values.get("Count")
        op = UpdateAny(
            template_path=template,
            namespace=f.text("Namespace"),
            count=f.get("Count", int, 0) if count is not None else None,
            count_param=f.text("CountParam"),
            update_per_second=f.get("UpdatePerSecond", int, 0),
            subresources=f.strings("Subresources"),
        )
    elif opcode == "deletePods":
        f = fields("Namespace", "LabelSelector", "SkipWaitToCompletion", "DeletePodsPerSecond")
        op = DeletePods(
            namespace=f.text("Namespace"),
            label_selector=f.labels("LabelSelector"),
            skip_wait_to_completion=f.get("SkipWaitToCompletion", bool, False),
            delete_pods_per_second=f.get("DeletePodsPerSecond", int, 0),
        )
    elif opcode == "churn":
        f = fields("Mode", "Number", "IntervalMilliseconds", "Namespace", "TemplatePaths")
        mode = f.text("Mode")
        number = f.get("Number", int, 0)
        if mode not in ("create", "recreate"):
            raise ConfigError(f"{f.where}: invalid mode: {mode}. must be one of [recreate create]")
        if mode == "recreate" and number == 0:
            raise ConfigError(f"{f.where}: number cannot be 0 when mode is recreate")
        paths = tuple((base / p).resolve() for p in f.strings("TemplatePaths"))
        if not paths:
            raise ConfigError(f"{f.where}: at least one template spec file needs to be specified")
        op = Churn(
            mode=mode,
            template_paths=paths,
            number=number,
            interval_ms=f.get("IntervalMilliseconds", int, 0),
            namespace=f.text("Namespace") or None,
        )
    elif opcode == "barrier":
        f = fields("Namespaces", "LabelSelector", "StageRequirement")
        stage = f.text("StageRequirement") or "Scheduled"
        if stage not in ("Scheduled", "Attempted"):
            raise ConfigError(f"{f.where}: invalid StageRequirement {stage}")
        op = Barrier(f.strings("Namespaces"), f.labels("LabelSelector"), stage)
    elif opcode == "allocResourceClaims":
        f = fields("Namespace")
        op = AllocResourceClaims(f.text("Namespace"))
    elif opcode == "startCollectingMetrics":
        f = fields("Name", "Namespaces", "LabelSelector")
        namespaces = f.strings("Namespaces")
        if not namespaces:
            raise ConfigError(f"{f.where}: namespaces cannot be empty")
        op = StartCollectingMetrics(namespaces, f.text("Name"), f.labels("LabelSelector"))
    else:
        fields()
        op = StopCollectingMetrics()
    return op


def collects_metrics(op: Op) -> bool:
    if isinstance(op, CreatePods):
        return op.collect_metrics
    if isinstance(op, CreatePodSets):
        return op.create_pods.collect_metrics
    return isinstance(op, StopCollectingMetrics)


# -- test cases and workloads ------------------------------------------------------------


@dataclass(frozen=True)
class Threshold:
    """Workload.Threshold and its ThresholdMetricSelector (default SchedulingThroughput
    Average, higher is better)."""

    value: float
    metric: str = "SchedulingThroughput"
    #: A threshold given per topic (`threshold: {dra: 56}`): upstream picks the entry of
    #: the topic its Go test passes; this executor has no topic and reports the map.
    by_topic: Mapping[str, float] = field(default_factory=dict)
    data_bucket: str = "Average"
    labels: Mapping[str, str] = field(default_factory=dict)
    expect_lower: bool = False


@dataclass(frozen=True)
class Workload:
    name: str
    params: Mapping[str, Value]
    labels: tuple[str, ...]
    threshold: Threshold
    feature_gates: Mapping[str, bool]


@dataclass(frozen=True)
class TestCase:
    name: str
    path: Path
    workloads: tuple[Workload, ...]
    labels: tuple[str, ...]
    feature_gates: Mapping[str, bool]
    scheduler_config_path: Path | None
    default_pod_template_path: Path | None
    #: The decoded ops, or why they cannot run (an unsupported op code).
    ops: tuple[Op, ...] = ()
    refusal: str = ""

    def workload(self, name: str) -> Workload:
        for w in self.workloads:
            if w.name == name:
                return w
        names = ", ".join(w.name for w in self.workloads)
        raise ConfigError(f"test case {self.name} has no workload {name!r} (it has: {names})")


def _threshold(raw: object, selector: object, default: Threshold, where: str) -> Threshold:
    value = 0.0
    by_topic: dict[str, float] = {}
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        value = float(raw)
    elif isinstance(raw, Mapping):
        by_topic = {str(k): float(v) for k, v in raw.items()}
        # thresholds.Get: a file's Go test passes one topic; with a single entry, that is it.
        if len(by_topic) == 1:
            value = next(iter(by_topic.values()))
    elif raw is not None:
        raise ConfigError(f"{where}: threshold must be a number or topic map")
    if value < 0:
        raise ConfigError(f"{where}: invalid Threshold={value}; should be non-negative")
    if selector is None:
        return dataclasses.replace(default, value=value, by_topic=by_topic)
    f = _Fields(selector, ("Name", "Labels", "DataBucket", "ExpectLower"), where, Path())
    bucket = f.text("DataBucket")
    if not bucket:
        raise ConfigError(f"{where}: dataBucket should be set for metric {f.text('Name')}")
    return Threshold(
        value,
        f.text("Name"),
        by_topic,
        bucket,
        f.labels("Labels"),
        f.get("ExpectLower", bool, False),
    )


def _gates(raw: object, where: str) -> dict[str, bool]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(isinstance(v, bool) for v in raw.values()):
        raise ConfigError(f"{where}: featureGates must map names to booleans")
    return {str(k): bool(v) for k, v in raw.items()}


_WORKLOAD_FIELDS = (
    "Name",
    "Params",
    "Labels",
    "Threshold",
    "ThresholdMetricSelector",
    "FeatureGates",
)


def decode_test_cases(raw: object, path: Path) -> list[TestCase]:
    """The test cases of one file (validateTestCases' checks included)."""
    base = path.parent
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{path}: no test cases defined")
    cases: list[TestCase] = []
    for index, item in enumerate(raw):
        f = _Fields(
            item,
            (
                "Name",
                "FeatureGates",
                "MetricsCollectorConfig",
                "WorkloadTemplate",
                "Workloads",
                "SchedulerConfigPath",
                "DefaultPodTemplatePath",
                "Labels",
                "DefaultThresholdMetricSelector",
            ),
            f"{path.name}[{index}]",
            base,
        )
        name = f.text("Name")
        where = f"test case {name}"
        default_threshold = _threshold(
            None, f.values.get("DefaultThresholdMetricSelector"), Threshold(0.0), where
        )
        workloads: list[Workload] = []
        raw_workloads = f.values.get("Workloads") or []
        if not isinstance(raw_workloads, list):
            raise ConfigError(f"{where}: workloads must be a list")
        for w_raw in raw_workloads:
            wf = _Fields(
                w_raw,
                (
                    "Name",
                    "Params",
                    "Labels",
                    "Threshold",
                    "ThresholdMetricSelector",
                    "FeatureGates",
                ),
                where,
                base,
            )
            w_where = f"{name}/{wf.text('Name')}"
            workloads.append(
                Workload(
                    name=wf.text("Name"),
                    params=wf.mapping("Params") or {},
                    labels=wf.strings("Labels"),
                    threshold=_threshold(
                        wf.values.get("Threshold"),
                        wf.values.get("ThresholdMetricSelector"),
                        default_threshold,
                        w_where,
                    ),
                    feature_gates=_gates(wf.values.get("FeatureGates"), w_where),
                )
            )
        if not workloads:
            raise ConfigError(f"{name}: no workloads defined")
        if len({w.name for w in workloads}) != len(workloads):
            raise ConfigError(f"{name}: workload names are not unique")
        template = f.values.get("WorkloadTemplate") or []
        if not isinstance(template, list) or not template:
            raise ConfigError(f"{name}: no ops defined")
        ops: list[Op] = []
        refusal = ""
        for op_index, op_raw in enumerate(template):
            try:
                ops.append(decode_op(op_raw, f"{name} op {op_index}", base))
            except UnsupportedOpError as err:
                refusal = str(err)
                break
        if not refusal and not any(collects_metrics(op) for op in ops):
            raise ConfigError(f"{name}: no op in the workload template collects metrics")
        cases.append(
            TestCase(
                name=name,
                path=path,
                workloads=tuple(workloads),
                labels=f.strings("Labels"),
                feature_gates=_gates(f.values.get("FeatureGates"), where),
                scheduler_config_path=f.path("SchedulerConfigPath"),
                default_pod_template_path=f.path("DefaultPodTemplatePath"),
                ops=tuple(ops),
                refusal=refusal,
            )
        )
    if len({c.name for c in cases}) != len(cases):
        raise ConfigError(f"{path}: test case names are not unique")
    return cases


def load_file(path: Path) -> list[TestCase]:
    return decode_test_cases(yaml.safe_load(path.read_text()), path)


def find_config_files(perf_dir: Path) -> list[Path]:
    """Every performance-config.yaml under test/integration/scheduler_perf, sorted."""
    return sorted(perf_dir.rglob("performance-config.yaml"))


def find_workload(perf_dir: Path, selector: str) -> tuple[TestCase, Workload]:
    """`TestCase/Workload`, or `dir/TestCase/Workload` where a test case name repeats
    (e.g. `podgroup/gangscheduling/GangScheduling/10Nodes_3Gangs`). Workload names may
    contain slashes themselves (`Unschedulable/5Nodes/1Init/10Pods`)."""
    matches: list[tuple[TestCase, Workload]] = []
    for path in find_config_files(perf_dir):
        rel = path.parent.relative_to(perf_dir).as_posix()
        for case in load_file(path):
            for w in case.workloads:
                if selector in (f"{case.name}/{w.name}", f"{rel}/{case.name}/{w.name}"):
                    matches.append((case, w))
    if not matches:
        raise ConfigError(f"no workload {selector!r} in any performance-config.yaml")
    if len(matches) > 1:
        where = ", ".join(str(c.path.parent.relative_to(perf_dir)) for c, _ in matches)
        raise ConfigError(f"workload {selector!r} is in several files ({where}); prefix one")
    case, workload = matches[0]
    if case.refusal:
        raise UnsupportedOpError(f"{case.name}/{workload.name}: {case.refusal}")
    return case, workload
