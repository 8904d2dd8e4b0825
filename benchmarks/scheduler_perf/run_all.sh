#!/usr/bin/env bash
# The upstream-workload table of docs/benchmarks.md: kube-scheduler's own scheduler_perf
# workloads (k8s.io/kubernetes v1.37.2, read from the Go module cache), each run with both
# schedulers RUNS times, at node counts a 2-core machine holds. Every run starts its own
# loopback cluster. Results go to benchmarks/results/perf-*.json; the table is then
#   .venv/bin/python -m benchmarks.scheduler_perf report benchmarks/results/perf-*.json
# MODE=--backlog (the default) creates each workload's measured pods while the scheduler
# is stopped, so this harness's creation rate cannot bound what is measured; MODE= runs
# them as upstream does, created while the scheduler runs.
# Needs `go` on PATH (to find the module cache). Hold the shared benchmark lock:
#   flock <lock> bash benchmarks/scheduler_perf/run_all.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
RUNS=${RUNS:-1}
MODE=${MODE---backlog}
run() {
  echo "== $* (load: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%H:%M:%S))"
  "$PY" -m benchmarks.scheduler_perf run --runs "$RUNS" $MODE "$@" || echo "!! $1 $2 failed"
}
run --workload SchedulingBasic/500Nodes
run --workload SchedulingPodAntiAffinity/500Nodes
run --workload SchedulingPodAffinity/500Nodes
run --workload SchedulingPreferredPodAffinity/500Nodes
run --workload SchedulingPreferredPodAntiAffinity/500Nodes
run --workload SchedulingNodeAffinity/500Nodes
run --workload TopologySpreading/500Nodes
run --workload PreferredTopologySpreading/500Nodes
run --workload SchedulingWithMixedChurn/1000Nodes
run --workload Unschedulable/500Nodes/10Init/1kPods
run --workload PreemptionBasic/1000Nodes
run --workload PreemptionAsync/500Nodes
run --workload SchedulingWhileGated/1Node_10000GatedPods \
  --set gatedPods=1000 --set deletingPods=2000 --set measurePods=2000
run --workload SchedulingDaemonset/15000Nodes --set initNodes=1000 --set measurePods=2000
run --workload podgroup/gangscheduling/GangScheduling/5000Nodes_1000Gangs_3000Pods \
  --set initNodes=1000
run --workload podgroup/tas/TopologyAwareScheduling/5000Nodes_750Gangs_3000Pods \
  --set initNodes=1000
run --workload SchedulingWithResourceClaimTemplate/empty_500nodes
run --workload SchedulingWithResourceClaimTemplate/2000pods_200nodes
run --workload SchedulingWithResourceClaimTemplate/half_100nodes
