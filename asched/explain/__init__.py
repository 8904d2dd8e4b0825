"""``asched explain``: one dry scheduling cycle of a pod against the live cluster.

It answers "why is my pod pending?" per node and per plugin, and "where would it go?"
with every Score plugin's numbers, using the same profiles and plugins as `asched run`,
without writing anything to the cluster.

Modules: `runner.explain_pod` (the whole command as a coroutine), `dryrun.dry_run` (the
cycle over a Framework), `view` (listing the cluster once), `services` (the read-only
scheduler services), `model` (the result), `render` (text and JSON), `cli` (argparse).
Nothing is imported here: `asched.cli` imports `asched.explain.cli` at start-up, and the
other subcommands should not pay for loading the scheduler framework.
"""
