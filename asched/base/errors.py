"""The root of every error that stops asched before it schedules anything.

A start-up error is the user's to fix (a missing kubeconfig, a config field, an API server
that never answered), so the command line reports it as one line per problem, each naming
the file or field, and exits 2, never with a traceback. Each failure mode keeps its own
type (asched.config.ConfigError, asched.client.kubeconfig.KubeconfigError,
asched.client.probe.ApiServerUnreachable); this base lets the CLI catch them all and only
them: anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class StartupError(Exception):
    """asched cannot start; `lines()` is what the user is told, one problem per line."""

    def lines(self) -> list[str]:
        # A message never spans lines: a wrapped YAML error would read as two problems.
        return [" ".join(str(self).split())]
