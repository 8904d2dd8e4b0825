#!/usr/bin/env bash
# Paired in-process cycle cost of two commits: for each node count, repetition and
# profile, `python -m benchmarks.cycle` runs once on BASE (a throwaway git worktree, with
# that commit's examples/policies on PYTHONPATH) and once on the checkout, back to back,
# so both see the same machine load. The benchmark code itself is the checkout's in both.
#
#   bash benchmarks/cycle_ab.sh BASE [NODES...]     (default nodes: 1000 5000)
#   REPS=3 PODS=500 PROFILES="default policies per-node" bash benchmarks/cycle_ab.sh 6c2b50e
#   KINDS="antiaffinity preferred-affinity" ARGS=--unique-labels PROFILES=default \
#       bash benchmarks/cycle_ab.sh 6068a45 500     (pod kinds, and flags for benchmarks.cycle)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: cycle_ab.sh BASE [NODES...]}
shift
nodes=("${@:-1000 5000}")
read -r -a nodes <<<"${nodes[*]}"
REPS=${REPS:-3}
PODS=${PODS:-500}
read -r -a profiles <<<"${PROFILES:-default policies per-node}"
read -r -a kinds <<<"${KINDS:-basic}"
read -r -a extra <<<"${ARGS:-}"
PY=$PWD/.venv/bin/python
tree=$(mktemp -d)
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
git worktree add -q --detach "$tree" "$base"
rm -rf "$tree/benchmarks"
cp -r benchmarks "$tree/benchmarks"
cost() { # cost DIR EXTRA_PYTHONPATH NODES PROFILE KIND
  (cd "$1" && PYTHONPATH="$1${2:+:$2}" "$PY" -m benchmarks.cycle --nodes "$3" --pods "$PODS" \
    --profile "$4" --kind "$5" "${extra[@]}" 2>/dev/null | grep -o 'ms_per_pod=[0-9.]*' | cut -d= -f2)
}
for n in "${nodes[@]}"; do
  for k in "${kinds[@]}"; do
    for rep in $(seq "$REPS"); do
      for p in "${profiles[@]}"; do
        old=$(cost "$tree" "$tree/examples/policies/src" "$n" "$p" "$k")
        new=$(cost "$PWD" "" "$n" "$p" "$k")
        echo "nodes=$n kind=$k rep=$rep profile=$p base_ms=$old head_ms=$new load=$(cut -d' ' -f1 /proc/loadavg)"
      done
    done
  done
done
