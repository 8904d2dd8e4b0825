"""Strict, typed reading of one YAML mapping, reporting problems by field path.

kube-scheduler decodes v1 configs strictly: unknown fields and wrong types are errors.
`Fields` wraps one mapping at a known path; each getter checks the type, records a
problem (never raises) and returns a fallback so decoding goes on and every problem in
the file is reported at once. `finish()` reports the keys nobody asked for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from asched.base.durations import DurationError, parse_duration
from asched.config.errors import Problems, child

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


class Fields:
    """One mapping being decoded. Keys must be strings (a YAML `1:` key is a problem)."""

    def __init__(self, raw: Mapping[Any, Any], path: str, problems: Problems) -> None:
        self.path = path
        self.problems = problems
        self._raw = raw
        self._used: set[str] = set()

    @classmethod
    def of(cls, value: Any, path: str, problems: Problems) -> Fields | None:
        """Fields over `value`, or None (and a problem) when it is not a mapping."""
        if not isinstance(value, dict):
            problems.error(path, f"must be an object, got {type_name(value)}")
            return None
        return cls(value, path, problems)

    def at(self, key: str) -> str:
        return child(self.path, key)

    def names(self) -> list[Any]:
        return list(self._raw)

    def raw(self, key: str) -> Any:
        """The value as written (None when absent or null); marks the key as known."""
        self._used.add(key)
        return self._raw.get(key)

    def error(self, key: str, message: str) -> None:
        self.problems.error(self.at(key), message)

    def text(self, key: str, default: str = "") -> str:
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self.error(key, f"must be a string, got {type_name(value)}")
            return default
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.error(key, f"must be a boolean, got {type_name(value)}")
            return default
        return value

    def integer(self, key: str, default: int, *, bits: int = 32) -> int:
        value = self.optional_integer(key, bits=bits)
        return default if value is None else value

    def optional_integer(self, key: str, *, bits: int = 32) -> int | None:
        """An integer (Go int32/int64: no bools, no fractions, in range), None if absent."""
        value = self.raw(key)
        if value is None:
            return None
        low, high = (INT32_MIN, INT32_MAX) if bits == 32 else (INT64_MIN, INT64_MAX)
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(key, f"must be an integer, got {type_name(value)}")
            return None
        if not low <= value <= high:
            self.error(key, f"{value} does not fit in a {bits}-bit integer")
            return None
        return value

    def number(self, key: str, default: float) -> float:
        value = self.raw(key)
        if value is None:
            return default
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            self.error(key, f"must be a number, got {type_name(value)}")
            return default
        return float(value)

    def duration(self, key: str, default: float) -> float:
        """A Go duration string ("15s") in seconds; metav1.Duration takes strings only."""
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self.error(key, f'must be a duration string such as "15s", got {type_name(value)}')
            return default
        try:
            return parse_duration(value)
        except DurationError as exc:
            self.error(key, str(exc))
            return default

    def array(self, key: str) -> list[Any]:
        value = self.raw(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(key, f"must be an array, got {type_name(value)}")
            return []
        return value

    def mapping(self, key: str) -> Fields | None:
        value = self.raw(key)
        if value is None:
            return None
        return Fields.of(value, self.at(key), self.problems)

    def finish(self) -> None:
        """Report every key not read: strict decoding, as kube-scheduler does for v1."""
        for key in self._raw:
            if not isinstance(key, str):
                self.problems.error(self.path, f"field names must be strings, got {key!r}")
            elif key not in self._used:
                self.problems.error(self.at(key), "unknown field")
