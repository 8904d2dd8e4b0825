"""asched and kube-scheduler side by side on one kwok cluster (see docs/benchmarks.md).

`python -m benchmarks run --scenario ...` runs one scenario with both schedulers (same
cluster, same pods, same client qps/burst) and writes JSON to benchmarks/results/;
`python -m benchmarks report FILES` prints the table docs/benchmarks.md shows.
"""
