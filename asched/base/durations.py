"""Durations written the way Go's time.Duration.String writes them ("1m30s", "500ms").

kube-scheduler prints durations with %v into messages users read (a Permit timeout:
"rejected due to timeout after waiting 1m30s at plugin X"), so asched prints them alike.
"""

from __future__ import annotations

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
