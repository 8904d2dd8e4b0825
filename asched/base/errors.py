"""The two kinds of errors that are not an API failure: start-up errors and bugs.

StartupError is the root of every error that stops asched before it schedules anything.

A start-up error is the user's to fix (a missing kubeconfig, a config field, an API server
that never answered), so the command line reports it as one line per problem, each naming
the file or field, and exits 2, never with a traceback. Each failure mode keeps its own
type (asched.config.ConfigError, asched.client.kubeconfig.KubeconfigError,
asched.client.probe.ApiServerUnreachable); this base lets the CLI catch them all and only
them: anything else is a bug and keeps its traceback.

Once running, an exception that is neither an ApiError nor a transport error is a bug;
`report_unexpected` logs it with its stack and counts it (UnexpectedErrors).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


class StartupError(Exception):
    """asched cannot start; `lines()` is what the user is told, one problem per line."""

    def lines(self) -> list[str]:
        # A message never spans lines: a wrapped YAML error would read as two problems.
        return [" ".join(str(self).split())]


@runtime_checkable
class UnexpectedErrors(Protocol):
    """Counts exceptions that are bugs, not failures of the network or the API server.

    Network handlers catch the client's transport and API errors and retry; anything else
    they catch is a bug, which must be seen (logged with its stack) and counted
    (asched_unexpected_errors_total{component}) rather than retried quietly forever. An
    optional ability: the metrics object and the plugin Handle have it, test fakes may not.
    """

    def unexpected_error(self, component: str) -> None: ...


def report_unexpected(
    log: Any, counter: UnexpectedErrors | None, component: str, event: str, **kw: Any
) -> None:
    """Call inside an `except` block: log the exception with its stack, and count it."""
    log.exception(event, component=component, **kw)
    if counter is not None:
        counter.unexpected_error(component)
