"""The one error type of config loading, and the collector that fills it.

Loading reports every problem it finds, not just the first, as kube-scheduler's validation
does (it aggregates field errors). Each problem is a `(field_path, message)` pair whose path
uses the file's own spelling (`profiles[0].plugins.Filter.enabled[1].name`), so a user can
find the line to fix. A problem without a field (a YAML syntax error) has an empty path.
"""

from __future__ import annotations

from collections.abc import Iterable

from asched.base.errors import StartupError


class ConfigError(StartupError, ValueError):
    """An invalid KubeSchedulerConfiguration; `problems` lists every `(path, message)`."""

    def __init__(self, problems: Iterable[tuple[str, str]], filename: str = "") -> None:
        self.problems: list[tuple[str, str]] = list(problems)
        self.filename = filename
        super().__init__(self._render())

    def _render(self) -> str:
        return "\n".join(
            f"{path}: {message}" if path else message for path, message in self.problems
        )

    def __str__(self) -> str:
        return self._render()

    def lines(self) -> list[str]:
        """`file: field: message`, one line per problem, so each names where to look."""
        prefix = f"{self.filename}: " if self.filename else "configuration: "
        return [
            prefix + " ".join((f"{path}: {message}" if path else message).split())
            for path, message in self.problems
        ]


class Problems:
    """Collects errors and warnings while a config is decoded; duplicates are kept once.

    Duplicates arise when one source entry is checked for several profiles (the
    top-level pluginConfig deviation), and one report per entry is enough.
    """

    def __init__(self) -> None:
        self._errors: dict[tuple[str, str], None] = {}
        self._warnings: dict[str, None] = {}

    def error(self, path: str, message: str) -> None:
        self._errors[(path, message)] = None

    def warn(self, path: str, message: str) -> None:
        self._warnings[f"{path}: {message}" if path else message] = None

    @property
    def errors(self) -> list[tuple[str, str]]:
        return list(self._errors)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(self._warnings)

    def raise_if_any(self, filename: str = "") -> None:
        if self._errors:
            raise ConfigError(self._errors, filename)


def child(path: str, key: str) -> str:
    """`profiles[0]` + `plugins` -> `profiles[0].plugins`."""
    return f"{path}.{key}" if path else key


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"
