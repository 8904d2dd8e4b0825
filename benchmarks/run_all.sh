#!/usr/bin/env bash
# The measurements behind docs/benchmarks.md, one command per scenario and client limit.
# Each command starts its own loopback cluster, runs every scheduler RUNS times (medians),
# stops by itself, and writes benchmarks/results/<scenario>-...json. The table is then
#   .venv/bin/python -m benchmarks report benchmarks/results/*.json
# About 180 minutes on 2 cores. RUNS=1 for a quick pass; ASCHED_REF=HEAD (or another ref)
# benchmarks a commit instead of a copy of the checkout's asched/ taken at each start.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
RUNS=${RUNS:-3}
REF=${ASCHED_REF:-worktree}
run() {
  echo "== $* (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  "$PY" -m benchmarks run --runs "$RUNS" --asched-ref "$REF" "$@"
}
UNTHROTTLED=(--qps 5000 --burst 5000)
DEFAULTS=(--qps 50 --burst 100)

# A. Basic (both schedulers, plus the bare-client binding ceiling)
run --scenario basic --nodes 1000 --pods 5000 "${UNTHROTTLED[@]}"
run --scenario basic --nodes 1000 --pods 5000 "${DEFAULTS[@]}"
run --scenario basic --nodes 5000 --pods 10000 "${UNTHROTTLED[@]}"
run --scenario basic --nodes 5000 --pods 10000 "${DEFAULTS[@]}"
# Scale: 15000 nodes (RSS and per-node cost; the ceiling run is part of every basic run)
run --scenario basic --nodes 15000 --pods 30000 "${UNTHROTTLED[@]}"
# C. Constraints (both schedulers)
run --scenario spread --nodes 1000 --pods 3000 "${UNTHROTTLED[@]}"
run --scenario antiaffinity --nodes 1000 --pods 1000 "${UNTHROTTLED[@]}"
run --scenario nodeaffinity --nodes 5000 --pods 10000 "${UNTHROTTLED[@]}"
run --scenario preferred-spread --nodes 5000 --pods 5000 "${UNTHROTTLED[@]}"
run --scenario churn --nodes 1000 --pods 5000 "${UNTHROTTLED[@]}"
# B. Gang (asched only: kube-scheduler has no Coscheduling plugin in-tree)
run --scenario gang --nodes 1000 --gangs 1000 --gang-size 3 "${UNTHROTTLED[@]}"
run --scenario gang --nodes 1000 --gangs 20 --gang-size 50 "${UNTHROTTLED[@]}"
run --scenario gang-oversub --gangs 300 --gang-size 3 "${UNTHROTTLED[@]}"
run --scenario gang-oversub --gangs 20 --gang-size 50 "${UNTHROTTLED[@]}"
# D. Native gangs (scheduling.k8s.io/v1beta1 PodGroups; both schedulers, kube-scheduler
#    with the GenericWorkload and TopologyAwareWorkloadScheduling gates)
run --scenario native-gang --nodes 1000 --gangs 1000 --gang-size 3 "${UNTHROTTLED[@]}"
run --scenario native-gang --nodes 1000 --gangs 20 --gang-size 50 "${UNTHROTTLED[@]}"
run --scenario native-gang --nodes 5000 --gangs 10 --gang-size 5000 "${UNTHROTTLED[@]}"
run --scenario native-gang-oversub --gangs 300 --gang-size 3 "${UNTHROTTLED[@]}"
