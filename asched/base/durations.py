"""Go duration text: written the way Go's time.Duration.String writes it ("1m30s",
"500ms"), and read the way time.ParseDuration reads it.

kube-scheduler prints durations with %v into messages users read (a Permit timeout:
"rejected due to timeout after waiting 1m30s at plugin X"), so asched prints them alike.
Its configuration's durations (leaderElection, DynamicResourcesArgs.bindingTimeout) are
`metav1.Duration` values, which decode only from a JSON string through
`time.ParseDuration`; parse_duration accepts exactly what that function accepts (same
units, optional sign, fractions, a bare "0", the int64-nanosecond range), so a file that
kube-scheduler reads means the same thing here, and a file it rejects is rejected here too.
"""

from __future__ import annotations

import re
from fractions import Fraction

_SECOND = 1_000_000_000


def _fixed(value: int, digits: int) -> str:
    """value / 10**digits, with the fraction's trailing zeros dropped (Go's fmtFrac)."""
    whole, frac = divmod(value, 10**digits)
    if not frac:
        return str(whole)
    return f"{whole}.{str(frac).zfill(digits).rstrip('0')}"


def go_duration(seconds: float) -> str:
    """time.Duration(seconds * 1e9).String(), at nanosecond resolution."""
    ns = round(seconds * _SECOND)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < _SECOND:
        if u < 1_000:
            return f"{sign}{u}ns"
        if u < 1_000_000:
            return f"{sign}{_fixed(u, 3)}µs"
        return f"{sign}{_fixed(u, 6)}ms"
    total_s, frac = divmod(u, _SECOND)
    minutes, secs = divmod(total_s, 60)
    text = _fixed(secs * _SECOND + frac, 9) + "s"
    if minutes:
        hours, minutes = divmod(minutes, 60)
        text = f"{minutes}m{text}"
        if hours:
            text = f"{hours}h{text}"
    return sign + text


_UNIT_NS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek small letter mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
# Longest units first so "ms" is not read as "m" followed by garbage.
_COMPONENT = re.compile(r"(?P<num>[0-9]*(?:\.[0-9]*)?)(?P<unit>ns|us|\u00b5s|\u03bcs|ms|s|m|h)?")
_MAX_NS = 2**63 - 1


class DurationError(ValueError):
    """The text is not a Go duration; the message says why, quoting the text."""


def parse_duration(text: str) -> float:
    """Go `time.ParseDuration(text)` in seconds; raises DurationError like Go errors.

    >>> parse_duration("1m30s")
    90.0
    """
    rest = text
    negative = False
    if rest[:1] in ("+", "-"):
        negative = rest[0] == "-"
        rest = rest[1:]
    if rest == "0":
        return 0.0
    if not rest:
        raise DurationError(f"invalid duration {text!r}")
    total_ns = 0
    pos = 0
    while pos < len(rest):
        match = _COMPONENT.match(rest, pos)
        assert match is not None  # the pattern can match the empty string
        number, unit = match.group("num"), match.group("unit")
        if not any(ch.isdigit() for ch in number):
            raise DurationError(f"invalid duration {text!r}")
        if unit is None:
            # Go names the missing unit or the unknown one it found instead.
            if match.end() == len(rest):
                raise DurationError(f"missing unit in duration {text!r}")
            raise DurationError(f"unknown unit {rest[match.end() :]!r} in duration {text!r}")
        # Go truncates each component's fractional nanoseconds separately.
        total_ns += int(Fraction(number) * _UNIT_NS[unit])
        if total_ns > _MAX_NS + (1 if negative else 0):
            raise DurationError(f"invalid duration {text!r}")
        pos = match.end()
    return (-total_ns if negative else total_ns) / 1e9
