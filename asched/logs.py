"""Logging, configured once at start-up: structured events with key-values, cheap to emit.

Every module logs through `structlog.get_logger(__name__)` with an event name and
key-values (`log.info("pod_bound", pod="ns/p", node="n1")`). This module decides how those
events leave the process:

- json (production): one JSON object per line on stderr, rendered by orjson straight to
  bytes; keys `event`, `level`, `ts` (ISO 8601, UTC) plus the call's and the context's
  key-values (pod, node, plugin, cycle bound with structlog.contextvars).
- text: structlog's console renderer, for humans at a terminal.
- auto: text when stderr is a terminal, json otherwise.

Levels below the configured one are dropped by `make_filtering_bound_logger`, whose
disabled methods are no-ops, so a debug call costs a method lookup and nothing more.
Records from the standard library's `logging` (aiohttp, asyncio) go through the same
renderer so the stream stays one format.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import orjson
import structlog
from structlog.typing import Processor

FORMATS = ("json", "text", "auto")
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}


# Tracebacks as structured frames, without local variables: locals can hold tokens and
# whole objects, and would make one error line kilobytes long.
_exception_dicts = structlog.processors.ExceptionRenderer(
    structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
)


def _orjson_str(obj: Any, **kwargs: Any) -> str:
    # The stdlib logging bridge needs text; the structlog path keeps orjson's bytes.
    return orjson.dumps(obj, **kwargs).decode()


class _Stderr:
    """Whatever sys.stderr is when a line is written, not when logging was configured.

    A process may swap sys.stderr after configuring (test runners capture it per test
    and close the capture afterwards); binding the object at configure time would then
    write into a closed file.
    """

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


class _StderrBytes:
    def write(self, data: bytes) -> int:
        return sys.stderr.buffer.write(data)

    def flush(self) -> None:
        sys.stderr.buffer.flush()


def configure_logging(level: str = "info", fmt: str = "json") -> None:
    """Configure structlog and the stdlib root logger; raises ValueError on unknown values."""
    level_no = LEVELS.get(level.lower())
    if level_no is None:
        raise ValueError(f"unknown log level {level!r}; expected one of {', '.join(LEVELS)}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown log format {fmt!r}; expected one of {', '.join(FORMATS)}")
    text = fmt == "text" or (fmt == "auto" and sys.stderr.isatty())

    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
        structlog.processors.StackInfoRenderer(),
    ]
    processors: list[Processor]
    stdlib_renderer: Processor
    if text:
        # Plain tracebacks, whether or not structlog found rich (asched/__init__.py).
        console = structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(),
            timestamp_key="ts",
            exception_formatter=structlog.dev.plain_traceback,
        )
        processors = [*shared, console]
        logger_factory: Any = structlog.PrintLoggerFactory(file=_Stderr())  # type: ignore[arg-type]
        stdlib_renderer = console
    else:
        processors = [
            *shared,
            _exception_dicts,
            structlog.processors.JSONRenderer(serializer=orjson.dumps),
        ]
        logger_factory = structlog.BytesLoggerFactory(file=_StderrBytes())  # type: ignore[arg-type]
        stdlib_renderer = structlog.processors.JSONRenderer(serializer=_orjson_str)

    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level_no),
        logger_factory=logger_factory,
        cache_logger_on_first_use=True,
    )
    _configure_stdlib(level_no, shared, stdlib_renderer, text)


def _configure_stdlib(
    level_no: int, shared: list[Processor], renderer: Processor, text: bool
) -> None:
    pre_chain: list[Processor] = [
        *shared,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.ExtraAdder(),
    ]
    if not text:
        pre_chain.append(_exception_dicts)
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=pre_chain,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler = logging.StreamHandler(_Stderr())
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level_no)
