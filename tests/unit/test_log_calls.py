"""No log call in asched can crash on its own keywords.

structlog's logger methods take the event name as their first parameter (`event`), and
pass it on to `_proxy_to_logger(method_name, event, **kw)`; `log.log(level, event, ...)`
takes `level` too. A call that also passes one of those names as a key-value, such as
`log.debug("event_already_exists", event=name)`, raises TypeError when it runs, whatever
the configured level: that is how the Event writer dropped series (issue 34). So does
`report_unexpected(log, counter, component, event, **kw)` with one of its own names. This
test reads every call in the package (ast), so such a call cannot be added again.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from structlog._base import BoundLoggerBase

import asched
from asched.base.errors import report_unexpected

PACKAGE = Path(asched.__file__).parent
LEVELS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "msg"}
)


def _named_parameters(func: object) -> set[str]:
    return {
        name
        for name, p in inspect.signature(func).parameters.items()  # type: ignore[arg-type]
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    } - {"self"}


def _reserved() -> frozenset[str]:
    """Names a log method binds itself, read from structlog rather than written down."""
    logger = structlog.make_filtering_bound_logger(0)
    names = _named_parameters(BoundLoggerBase._proxy_to_logger)
    for level in LEVELS - {"msg", "warn", "fatal"}:
        names |= _named_parameters(getattr(logger, level))
    return frozenset(names)


RESERVED = _reserved()
# `.log(level, event, ...)` binds `level` as well.
RESERVED_LOG = RESERVED | _named_parameters(structlog.make_filtering_bound_logger(0).log)
RESERVED_REPORT = frozenset(_named_parameters(report_unexpected)) | RESERVED


def _is_logger(node: ast.expr) -> bool:
    """`log`, `logger`, `self._log`, `n.log`, ...: what asched names its loggers."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name.lstrip("_") in {"log", "logger"}


def _problems(source: str, filename: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source, filename=filename)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        where = f"{filename}:{node.lineno}"
        keywords = {k.arg for k in node.keywords if k.arg is not None}
        if isinstance(func, ast.Name) and func.id == "report_unexpected":
            for name in sorted(keywords & RESERVED_REPORT):
                yield f"{where}: report_unexpected(..., {name}=...) collides with a parameter"
            continue
        if not (isinstance(func, ast.Attribute) and _is_logger(func.value)):
            continue
        if func.attr in LEVELS:
            reserved, positional = RESERVED, 1
        elif func.attr == "log":
            reserved, positional = RESERVED_LOG, 2
        else:
            continue
        for name in sorted(keywords & reserved):
            yield f"{where}: log.{func.attr}(..., {name}=...) collides with structlog's own"
        if len(node.args) > positional:
            # Extra positionals are %-interpolated into the event name: key-values only.
            yield f"{where}: log.{func.attr} with positional values; pass key-values"


def test_structlog_reserves_the_names_this_test_knows() -> None:
    # If structlog renamed its parameters, the scan below would look for the wrong names.
    assert {"event", "method_name"} <= RESERVED
    assert "level" in RESERVED_LOG


def test_no_log_call_passes_a_reserved_keyword() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 100  # the scan sees the package
    problems = [
        p for f in files for p in _problems(f.read_text(), str(f.relative_to(PACKAGE.parent)))
    ]
    assert problems == []


@pytest.mark.parametrize(
    "source",
    [
        pytest.param('log.debug("x", event=name)', id="event"),
        pytest.param('self._log.warning("x", method_name=m)', id="method_name"),
        pytest.param('log.log(10, "x", level=3)', id="level"),
        pytest.param('log.info("x %s", name)', id="positional"),
        pytest.param('report_unexpected(log, m, "c", "e", component="x")', id="report"),
    ],
)
def test_the_scan_finds_a_collision(source: str) -> None:
    assert list(_problems(source, "probe.py")) != []
