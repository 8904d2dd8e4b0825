#!/usr/bin/env bash
# The measurements behind docs/benchmarks.md, one command per scenario and client limit.
# Each command starts its own loopback cluster, runs every scheduler RUNS times (medians),
# stops by itself, and writes benchmarks/results/<scenario>-...json. The table is then
#   .venv/bin/python -m benchmarks report benchmarks/results/*.json
# About 130 minutes on 2 cores. RUNS=1 for a quick pass; ASCHED_REF=HEAD (or another ref)
# benchmarks a commit instead of a copy of the checkout's asched/ taken at each start.
# Run it from a checkout nobody edits meanwhile: bash reads this file as it goes, and every
# command imports benchmarks/ afresh.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
RUNS=${RUNS:-3}
# The client-limited rows bind at the limiter's 50/s whichever scheduler runs (every earlier
# round measured 50-51 pods/s for both), so one run each says what they have to say.
THROTTLED_RUNS=${THROTTLED_RUNS:-1}
REF=${ASCHED_REF:-worktree}
run() {
  echo "== $* (load: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%H:%M:%S))"
  "$PY" -m benchmarks run --runs "$RUNS" --asched-ref "$REF" "$@"
}
UNTHROTTLED=(--qps 5000 --burst 5000)
DEFAULTS=(--qps 50 --burst 100 --runs "$THROTTLED_RUNS")

# A. Basic (both schedulers, plus the bare-client binding ceiling)
run --scenario basic --nodes 1000 --pods 5000 "${UNTHROTTLED[@]}"
# The same pods with the seed's six policies added (asched-plugins), beside both defaults.
run --scenario plugins --nodes 1000 --pods 5000 "${UNTHROTTLED[@]}"
run --scenario basic --nodes 5000 --pods 10000 "${UNTHROTTLED[@]}"
# C. Constraints and churn (both schedulers)
run --scenario spread --nodes 1000 --pods 3000 "${UNTHROTTLED[@]}"
run --scenario antiaffinity --nodes 1000 --pods 1000 "${UNTHROTTLED[@]}"
run --scenario nodeaffinity --nodes 5000 --pods 10000 "${UNTHROTTLED[@]}"
run --scenario preferred-spread --nodes 5000 --pods 5000 "${UNTHROTTLED[@]}"
run --scenario churn --nodes 1000 --pods 5000 "${UNTHROTTLED[@]}"
# Scale: 15000 nodes (RSS and per-node cost; the ceiling run is part of every basic run).
# kube-scheduler needs about 200 s here, past the default timeout (165 s for 30000 pods).
run --scenario basic --nodes 15000 --pods 30000 "${UNTHROTTLED[@]}" --timeout 600
# B. Gang (asched only: kube-scheduler has no Coscheduling plugin in-tree)
run --scenario gang --nodes 1000 --gangs 1000 --gang-size 3 "${UNTHROTTLED[@]}"
run --scenario gang --nodes 1000 --gangs 20 --gang-size 50 "${UNTHROTTLED[@]}"
run --scenario gang-oversub --gangs 300 --gang-size 3 "${UNTHROTTLED[@]}"
run --scenario gang-oversub --gangs 20 --gang-size 50 "${UNTHROTTLED[@]}"
# D. Native gangs (scheduling.k8s.io/v1beta1 PodGroups; both schedulers, kube-scheduler
#    with the GenericWorkload and TopologyAwareWorkloadScheduling gates)
run --scenario native-gang --nodes 1000 --gangs 1000 --gang-size 3 "${UNTHROTTLED[@]}"
run --scenario native-gang --nodes 1000 --gangs 20 --gang-size 50 "${UNTHROTTLED[@]}"
run --scenario native-gang-oversub --gangs 300 --gang-size 3 "${UNTHROTTLED[@]}"
# 50000 pods in ten gangs: asched once. kube-scheduler was still not ready 620 s after its
# start in round four (it had queued 8,438 of the pods), so three runs of both would take
# most of an hour to show that again.
run --scenario native-gang --nodes 5000 --gangs 10 --gang-size 5000 "${UNTHROTTLED[@]}" \
  --runs 1 --schedulers asched --timeout 900
# E. Client-limited (kube-scheduler's default qps 50 / burst 100, both schedulers)
run --scenario basic --nodes 1000 --pods 5000 "${DEFAULTS[@]}"
run --scenario basic --nodes 5000 --pods 10000 "${DEFAULTS[@]}"
