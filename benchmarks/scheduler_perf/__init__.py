"""kube-scheduler's scheduler_perf workloads, read unmodified and run against both schedulers.

config (decode performance-config.yaml), gotemplate (render its templates), params
(apply a workload's params), executor (run the ops on a live cluster), podstore (the pod
informer the executor waits on), run (both schedulers, repetitions), report (the table).
"""
