"""Reading ginkgo's JSON report and judging asched against kube-scheduler, per spec.

The rule the suite enforces: every spec kube-scheduler passes on the local kwok cluster,
asched passes too. A spec kube-scheduler does not pass says nothing about asched, so it
never fails the run; the table still shows it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PASSED = "passed"
SKIPPED = "skipped"
#: What the table shows for a spec one run did not report at all (for example a run that
#: died before reaching it).
MISSING = "missing"


@dataclass(frozen=True, slots=True)
class SpecResult:
    """One spec's outcome in one run: its full name, ginkgo's state, its run time."""

    name: str
    state: str
    seconds: float
    message: str = ""
    #: How often ginkgo ran it (more than 1 only under --ginkgo.flake-attempts).
    attempts: int = 1


def spec_name(report: Mapping[str, object]) -> str:
    """A spec's full text as `ginkgo --focus` matches it: containers, then the leaf."""
    containers = report.get("ContainerHierarchyTexts") or []
    assert isinstance(containers, list)
    return " ".join([*(str(c) for c in containers), str(report.get("LeafNodeText", ""))])


def read_report(path: Path) -> list[SpecResult]:
    """The `It` specs a `--ginkgo.json-report` file ran or skipped while running; suite
    setup nodes and the specs the focus left out are not in the list."""
    suites = json.loads(path.read_text())
    results = []
    for suite in suites:
        for spec in suite.get("SpecReports") or []:
            if spec.get("LeafNodeType") != "It":
                continue
            failure = spec.get("Failure") or {}
            # ginkgo reports a spec outside the focus as skipped with no failure; a spec
            # that called Skip() carries the reason as its failure message.
            if spec.get("State") == SKIPPED and not failure:
                continue
            results.append(
                SpecResult(
                    name=spec_name(spec),
                    state=str(spec.get("State", "")),
                    # ginkgo writes durations in nanoseconds.
                    seconds=float(spec.get("RunTime", 0)) / 1e9,
                    message=str(failure.get("Message", "")),
                    attempts=max(1, int(spec.get("NumAttempts") or 1)),
                )
            )
    return results


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    asched: SpecResult | None
    kube: SpecResult | None

    @property
    def regression(self) -> bool:
        """kube-scheduler passed the spec and asched did not."""
        kube_passed = self.kube is not None and self.kube.state == PASSED
        asched_passed = self.asched is not None and self.asched.state == PASSED
        return kube_passed and not asched_passed


def compare(asched: Iterable[SpecResult], kube: Iterable[SpecResult]) -> list[Row]:
    """One row per spec either run reported, sorted by name."""
    by_asched = {r.name: r for r in asched}
    by_kube = {r.name: r for r in kube}
    return [
        Row(name, by_asched.get(name), by_kube.get(name))
        for name in sorted(by_asched.keys() | by_kube.keys())
    ]


def _cell(result: SpecResult | None) -> str:
    if result is None:
        return f"{MISSING:>18}"
    # A spec that passed only on a later attempt says so: "passed*2".
    retried = f"*{result.attempts}" if result.attempts > 1 else ""
    return f"{result.state + retried:>11} {result.seconds:5.1f}s"


def render_table(rows: Sequence[Row]) -> str:
    """A plain-text table: asched's and kube-scheduler's state and run time per spec, a
    mark on every regression, then the totals."""
    prefix = "[sig-scheduling] "
    lines = [f"{'asched':>18}  {'kube-scheduler':>18}    spec"]
    for row in rows:
        mark = "!!" if row.regression else "  "
        name = row.name.removeprefix(prefix)
        lines.append(f"{_cell(row.asched)}  {_cell(row.kube)} {mark} {name}")
    lines.append(_totals("asched", [r.asched for r in rows]))
    lines.append(_totals("kube-scheduler", [r.kube for r in rows]))
    regressions = sum(r.regression for r in rows)
    lines.append(f"asched fails {regressions} spec(s) kube-scheduler passes")
    return "\n".join(lines)


def _totals(side: str, results: Iterable[SpecResult | None]) -> str:
    counts: dict[str, int] = {}
    seconds = 0.0
    for result in results:
        state = MISSING if result is None else result.state
        counts[state] = counts.get(state, 0) + 1
        seconds += 0.0 if result is None else result.seconds
    parts = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    return f"{side}: {parts}; {seconds:.0f}s in specs"
