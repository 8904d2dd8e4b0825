"""``asched demo``: a local control plane, mixed kwok nodes, asched, a workload, a report.

Modules: `runner.run_demo` (the whole demo as a coroutine, with its teardown guarantee),
`topology` (the nodes), `workload` (the pods and what each shows), `instances` (asched
schedulers inside the demo's event loop), `progress` (following the pods), `report` (the
closing table), `cli` (argparse). Package data: `data/seed-config.yaml` (the seed
article's configuration, verbatim) and `data/gang-config.yaml`.
Nothing is imported here, so `asched.cli` can load the subcommand cheaply.
"""
