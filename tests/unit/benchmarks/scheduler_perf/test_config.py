"""performance-config.yaml decoding, param resolution and op refusal, without a cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.scheduler_perf.config import (
    Barrier,
    ConfigError,
    CreateNodes,
    CreatePodGroups,
    CreatePods,
    UnsupportedOpError,
    decode_test_cases,
    find_workload,
)
from benchmarks.scheduler_perf.params import parse_overrides, resolve

BASE = Path("/perf/misc/performance-config.yaml")

BASIC = """
- name: SchedulingBasic
  defaultPodTemplatePath: ../templates/pod-default.yaml
  featureGates:
    GenericWorkload: true
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
  - opcode: createPods
    countParam: $initPods
  - opcode: createPodGroups
    namespace: gang-ns-0
    countParam: $groups
    templatePath: templates/podgroup.yaml
    templateParams:
      podsPerGroup: $podsPerGroup
      minCount: $minCount|2
  - opcode: createPods
    countParam: $groups
    countMultiplierParam: $podsPerGroup
    collectMetrics: true
  - opcode: barrier
    stageRequirement: Attempted
  workloads:
  - name: 500Nodes
    threshold: 680
    featureGates:
      GenericWorkload: false
      SchedulerAsyncAPICalls: true
    labels: [performance]
    params:
      initNodes: 500
      initPods: 500
      groups: 10
      podsPerGroup: 3
"""


def cases(text: str = BASIC) -> Any:
    return decode_test_cases(yaml.safe_load(text), BASE)


def test_decodes_ops_paths_and_thresholds() -> None:
    (case,) = cases()
    assert case.default_pod_template_path == Path("/perf/templates/pod-default.yaml")
    nodes, _pods, groups, measured, barrier = case.ops
    assert isinstance(nodes, CreateNodes)
    assert nodes.count_param == "$initNodes"
    assert isinstance(groups, CreatePodGroups)
    assert groups.template_path == Path("/perf/misc/templates/podgroup.yaml")
    assert isinstance(measured, CreatePods)
    assert measured.collect_metrics
    assert isinstance(barrier, Barrier)
    assert barrier.stage_requirement == "Attempted"
    (w,) = case.workloads
    assert w.threshold.value == 680
    assert w.threshold.metric == "SchedulingThroughput"
    assert {**case.feature_gates, **w.feature_gates} == {
        "GenericWorkload": False,
        "SchedulerAsyncAPICalls": True,
    }


def test_field_names_match_without_case_as_go_json_does() -> None:
    text = BASIC.replace("countParam: $initNodes", "CountParam: $initNodes")
    (case,) = cases(text)
    assert isinstance(case.ops[0], CreateNodes)
    assert case.ops[0].count_param == "$initNodes"


def test_resolve_fills_counts_multipliers_and_template_params() -> None:
    (case,) = cases()
    ops = resolve(case, case.workloads[0], {})
    assert isinstance(ops[0], CreateNodes)
    assert ops[0].count == 500
    assert isinstance(ops[1], CreatePods)
    assert ops[1].count == 500
    assert isinstance(ops[2], CreatePodGroups)
    assert ops[2].count == 10
    # $minCount|2: the default, decoded as YAML, since the workload has no minCount.
    assert ops[2].template_params == {"podsPerGroup": 3, "minCount": 2}
    assert isinstance(ops[3], CreatePods)
    assert ops[3].count == 30
    assert ops[3].signature_batch_size == 1


def test_overrides_scale_a_workload() -> None:
    (case,) = cases()
    ops = resolve(case, case.workloads[0], parse_overrides(["initNodes=50", "initPods=7"]))
    assert isinstance(ops[0], CreateNodes)
    assert ops[0].count == 50
    assert isinstance(ops[1], CreatePods)
    assert ops[1].count == 7


def test_override_of_a_param_the_workload_lacks_is_an_error() -> None:
    (case,) = cases()
    with pytest.raises(ConfigError, match="has no params nodes"):
        resolve(case, case.workloads[0], {"nodes": 5})


def test_unused_params_are_an_error_as_upstream() -> None:
    text = BASIC.replace("      podsPerGroup: 3\n", "      podsPerGroup: 3\n      typo: 1\n")
    (case,) = cases(text)
    with pytest.raises(ConfigError, match=r"\['typo'\] are defined on workload 500Nodes"):
        resolve(case, case.workloads[0], {})


def test_undefined_count_param_names_the_op() -> None:
    text = BASIC.replace("countParam: $initPods", "countParam: $initPodz")
    (case,) = cases(text)
    with pytest.raises(ConfigError, match="op 1: parameter initPodz is undefined"):
        resolve(case, case.workloads[0], {})


@pytest.mark.parametrize(
    ("op", "message"),
    [
        ("- opcode: sleep\n    duration: 1s", "op code 'sleep' is not supported"),
        ("- opcode: createResourceClaims", "op code 'createResourceClaims' is not supported"),
        ("- opcode: startCollectingProfile", "op code 'startCollectingProfile' is not supported"),
    ],
    ids=["sleep", "createResourceClaims", "profile"],
)
def test_unsupported_op_refuses_the_test_case_naming_it(
    op: str, message: str, tmp_path: Path
) -> None:
    text = BASIC.replace("  - opcode: barrier", f"  {op}\n  - opcode: barrier")
    perf = tmp_path / "misc"
    perf.mkdir()
    (perf / "performance-config.yaml").write_text(text)
    with pytest.raises(UnsupportedOpError) as err:
        find_workload(tmp_path, "SchedulingBasic/500Nodes")
    assert message in str(err.value)
    assert "SchedulingBasic/500Nodes" in str(err.value)
    assert "op 4" in str(err.value)


def test_unknown_opcode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown opcode 'frobnicate'"):
        cases(BASIC.replace("opcode: barrier", "opcode: frobnicate"))


def test_unknown_field_is_an_error_as_with_unmarshal_strict() -> None:
    with pytest.raises(ConfigError, match="unknown field 'countParm'"):
        cases(BASIC.replace("countParam: $initNodes", "countParm: $initNodes"))


def test_a_test_case_without_metrics_is_refused() -> None:
    with pytest.raises(ConfigError, match="no op in the workload template collects metrics"):
        cases(BASIC.replace("    collectMetrics: true\n", ""))


def test_workload_names_with_slashes_are_found(tmp_path: Path) -> None:
    text = BASIC.replace("- name: 500Nodes", "- name: 5Nodes/1Init/10Pods")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "performance-config.yaml").write_text(text)
    case, workload = find_workload(tmp_path, "x/SchedulingBasic/5Nodes/1Init/10Pods")
    assert (case.name, workload.name) == ("SchedulingBasic", "5Nodes/1Init/10Pods")


def test_topic_threshold_with_one_topic_is_that_value() -> None:
    (case,) = cases(BASIC.replace("threshold: 680", "threshold:\n      dra: 56"))
    assert case.workloads[0].threshold.value == 56
    assert case.workloads[0].threshold.by_topic == {"dra": 56}


def test_a_scheduler_config_path_is_refused_not_ignored() -> None:
    text = BASIC.replace(
        "  defaultPodTemplatePath:", "  schedulerConfigPath: cfg.yaml\n  defaultPodTemplatePath:"
    )
    (case,) = cases(text)
    with pytest.raises(ConfigError, match=r"schedulerConfigPath \(cfg\.yaml\) is not supported"):
        resolve(case, case.workloads[0], {})
