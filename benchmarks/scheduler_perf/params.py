"""A workload's params applied to its test case's ops (scheduler_perf's patchParams).

Upstream resolves every op of the template against the workload's params before it runs
it (unrollWorkloadTemplate, then runWorkload): counts from `countParam` (a number, taken
as int), `countMultiplierParam`, `durationParam` and `steadyStateParam`, `$name` and
`$name|default` in templateParams, createPodSets unrolled into one createPods per
namespace; a param that no op reads is an error. `overrides` replace params (to scale a
workload to the nodes this machine holds) and are reported with the results.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import yaml

from benchmarks.scheduler_perf.config import (
    ConfigError,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePodGroups,
    CreatePods,
    CreatePodSets,
    Op,
    TemplateParams,
    TestCase,
    UpdateAny,
    Workload,
    duration_seconds,
)
from benchmarks.scheduler_perf.gotemplate import Value


class Params:
    """A workload's params with a record of which ones were read (params.isUsed)."""

    def __init__(self, values: Mapping[str, Value]) -> None:
        self.values = dict(values)
        self.used: set[str] = set()

    def _raw(self, ref: str) -> Value:
        if not ref.startswith("$"):
            raise ConfigError(f"parameter reference {ref!r} must start with $")
        key = ref[1:]
        self.used.add(key)
        if key not in self.values:
            raise ConfigError(f"parameter {key} is undefined")
        return self.values[key]

    def number(self, ref: str) -> int:
        """params.get: a number (float64 in Go), truncated to int."""
        value = self._raw(ref)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"parameter {ref[1:]} has the wrong type {type(value).__name__}")
        return int(value)

    def text(self, ref: str) -> str:
        value = self._raw(ref)
        if not isinstance(value, str):
            raise ConfigError(f"parameter {ref[1:]} has the wrong type {type(value).__name__}")
        return value

    def flag(self, ref: str) -> bool:
        value = self._raw(ref)
        if not isinstance(value, bool):
            raise ConfigError(f"parameter {ref[1:]} has the wrong type {type(value).__name__}")
        return value

    def template(self, params: TemplateParams) -> dict[str, Value]:
        """resolveTemplateParams: `$name` or `$name|default` (default decoded as YAML)."""
        resolved = dict(params)
        for key, value in params.items():
            if not (isinstance(value, str) and value.startswith("$")):
                continue
            name, sep, default = value[1:].partition("|")
            if name in self.values:
                self.used.add(name)
                resolved[key] = self.values[name]
            elif sep and name:
                resolved[key] = yaml.safe_load(default)
            else:
                raise ConfigError(f"parameter {name!r} not found")
        return resolved

    def unused(self) -> list[str]:
        return sorted(set(self.values) - self.used)


def _pods(op: CreatePods, p: Params) -> CreatePods:
    count = p.number(op.count_param) if op.count_param else op.count
    if op.count_multiplier_param:
        count *= p.number(op.count_multiplier_param)
    batch = (
        p.number(op.signature_batch_size_param)
        if op.signature_batch_size_param
        else op.signature_batch_size
    )
    duration = op.duration_s
    if op.duration_param:
        duration = duration_seconds(p.text(op.duration_param), op.duration_param)
    steady = p.flag(op.steady_state_param) if op.steady_state_param else op.steady_state
    resolved = dataclasses.replace(
        op,
        count=count,
        signature_batch_size=batch or 1,
        duration_s=duration,
        steady_state=steady,
        template_params=p.template(op.template_params),
    )
    if resolved.collect_metrics and resolved.skip_wait_to_completion:
        raise ConfigError("collectMetrics and skipWaitToCompletion cannot be true at the same time")
    if resolved.skip_wait_to_completion and resolved.steady_state:
        raise ConfigError("skipWaitToCompletion and steadyState cannot be true at the same time")
    if resolved.steady_state and resolved.duration_s <= 0:
        raise ConfigError("when creating pods in a steady state, the test duration must be > 0")
    if count < 0:
        raise ConfigError(f"invalid Count={count}")
    return resolved


def resolve_op(op: Op, p: Params) -> Op:
    if isinstance(op, CreatePods):
        return _pods(op, p)
    if isinstance(op, CreateNodes | CreateNamespaces | CreatePodGroups):
        count = p.number(op.count_param) if op.count_param else op.count
        if count < 0:
            raise ConfigError(f"invalid Count={count}")
        if isinstance(op, CreateNamespaces):
            return dataclasses.replace(op, count=count)
        if isinstance(op, CreatePodGroups) and count < 1:
            raise ConfigError(f"count must be greater than 0, got {count}")
        return dataclasses.replace(op, count=count, template_params=p.template(op.template_params))
    if isinstance(op, CreateAny):
        any_count = p.number(op.count_param) if op.count_param else op.count
        params = p.template(op.template_params)
        return dataclasses.replace(op, count=any_count, template_params=params)
    if isinstance(op, UpdateAny):
        return dataclasses.replace(
            op, count=p.number(op.count_param) if op.count_param else op.count
        )
    return op


def resolve(case: TestCase, workload: Workload, overrides: Mapping[str, Value]) -> list[Op]:
    """The ops the workload runs, in order, with createPodSets unrolled."""
    if case.scheduler_config_path is not None:
        # Both schedulers would need that KubeSchedulerConfiguration's profile; the runner
        # configures them itself (benchmarks/schedulers.py), so refuse rather than ignore.
        raise ConfigError(
            f"{case.name}/{workload.name}: schedulerConfigPath "
            f"({case.scheduler_config_path.name}) is not supported"
        )
    unknown = sorted(set(overrides) - set(workload.params))
    if unknown:
        raise ConfigError(f"{case.name}/{workload.name} has no params {', '.join(unknown)}")
    p = Params({**workload.params, **overrides})
    ops: list[Op] = []
    for index, op in enumerate(case.ops):
        try:
            if isinstance(op, CreatePodSets):
                count = p.number(op.count_param) if op.count_param else op.count
                for i in range(count):
                    inner = dataclasses.replace(
                        op.create_pods, namespace=f"{op.namespace_prefix}-{i}"
                    )
                    ops.append(_pods(inner, p))
            else:
                ops.append(resolve_op(op, p))
        except ConfigError as err:
            raise ConfigError(f"{case.name}/{workload.name} op {index}: {err}") from None
    unused = p.unused()
    if unused:
        raise ConfigError(
            f"the parameters {unused} are defined on workload {workload.name}, but unused"
        )
    return ops


def parse_overrides(items: Sequence[str]) -> dict[str, Value]:
    """`name=value` pairs (value decoded as YAML, so 500 is a number)."""
    out: dict[str, Value] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise ConfigError(f"--set {item!r}: expected name=value")
        out[name] = yaml.safe_load(raw)
    return out
