"""DRA device selectors: CEL expressions over one `device`, compiled once and cached.

Follows k8s.io/dynamic-resource-allocation/cel (compiler.CompileCELExpression,
CompilationResult.DeviceMatches): the only variable is `device`, with `driver`,
`attributes[domain][name]`, `capacity[domain][name]` (quantities) and
`allowMultipleAllocations`; an unqualified attribute name belongs to the driver's domain;
a domain the device has nothing in reads as an empty map. Kubernetes' quantity library is
provided for capacities: `quantity("1Gi")`, `compareTo`, `isGreaterThan`, `isLessThan`,
`asInteger`, `asApproximateFloat`, `add`, `sub`.

Runtime: the `common-expression-language` package (Rust CEL, about 1 µs an evaluation
where the pure-Python `cel-python` took 250-700 µs on the same selectors). It does not
type-check, so two things Go refuses at compile time are caught here instead: a reference
to any variable but `device` is a compile error (Go: "undeclared reference"), and a result
that is not a bool is an evaluation error. Quantities are exact integers (rounded up like
Quantity.Value), so comparing one with a plain int works where Go would refuse to compile,
and comparing values of different types (an int attribute with `true`) is false where
cel-go reports "no such overload".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cel

from asched.api.dra import Device
from asched.api.quantity import QuantityError, parse_quantity

DEVICE_VAR = "device"


class CelRuntimeError(Exception):
    """An expression failed while evaluating one device (Go: "CEL runtime error")."""


def _quantity(text: str) -> int:
    try:
        return parse_quantity(text)
    except QuantityError as exc:
        raise ValueError(str(exc)) from None


def _compare_to(a: int, b: int) -> int:
    return (a > b) - (a < b)


_FUNCTIONS: dict[str, Any] = {
    "quantity": _quantity,
    "compareTo": _compare_to,
    "isGreaterThan": lambda a, b: a > b,
    "isLessThan": lambda a, b: a < b,
    "asInteger": lambda a: a,
    "asApproximateFloat": float,
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
}


@dataclass(frozen=True, slots=True)
class Compiled:
    """One expression: a program, or the compile error (Go's CompilationResult.Error)."""

    expression: str
    program: Any = None
    error: str = ""

    def matches(self, device: Device, driver: str) -> bool:
        """Go's DeviceMatches; raises CelRuntimeError with the CEL wording.

        The answer depends only on the expression and the device's driver, attributes and
        capacity, and the devices of a cluster are mostly alike (eight identical GPUs on
        every node), so answers are cached by that content: one evaluation (about 35 us,
        most of it handing the device to CEL) per distinct device instead of per device
        per node.
        """
        # The type is part of the key: True == 1 in Python, not in CEL.
        attrs = tuple(sorted((k, type(v).__name__, v) for k, v in device.attributes.items()))
        caps = tuple(sorted(device.capacity.items()))
        return _evaluate(self, driver, attrs, caps)

    def evaluate(self, device: Device, driver: str) -> bool:
        ctx = cel.Context()
        ctx.add_variable(DEVICE_VAR, device_variable(device, driver))
        for name, fn in _FUNCTIONS.items():
            ctx.add_function(name, fn)
        try:
            result = self.program.execute(ctx)
        except KeyError as exc:
            raise CelRuntimeError(
                f"no such key: {exc.args[0]}. consider using CEL optional chaining "
                "(.? followed by orValue()) or guarding the check with has() for "
                "optional fields"
            ) from None
        except (RuntimeError, ValueError, TypeError) as exc:
            raise CelRuntimeError(str(exc)) from None
        if not isinstance(result, bool):
            raise CelRuntimeError(
                f"CEL result of type {type(result).__name__} could not be converted to bool"
            )
        return result


@lru_cache(maxsize=16384)
def _evaluate(
    compiled: Compiled,
    driver: str,
    attributes: tuple[tuple[str, str, Any], ...],
    capacity: tuple[tuple[str, int], ...],
) -> bool:
    """Compiled.evaluate memoized by device content (errors are raised, not cached)."""
    attrs = {name: value for name, _, value in attributes}
    return compiled.evaluate(Device("", attrs, dict(capacity)), driver)


def _go_issue(message: str) -> str:
    """The library's parse error minus its own preamble: what cel-go prints from ERROR: on."""
    _, sep, rest = message.partition("ERROR:")
    return f"ERROR:{rest}" if sep else message


@lru_cache(maxsize=1024)
def compile_expression(expression: str) -> Compiled:
    """Compile once per distinct expression (Go's cel.Cache.GetOrCompile)."""
    try:
        program = cel.compile(expression)
    except (ValueError, RuntimeError) as exc:
        return Compiled(expression, error=f"compilation failed: {_go_issue(str(exc))}")
    for name in program.variables():
        if name != DEVICE_VAR:
            return Compiled(
                expression,
                error=(
                    f"compilation failed: ERROR: <input>:1:1: undeclared reference to "
                    f"'{name}' (in container '')"
                ),
            )
    return Compiled(expression, program)


def device_variable(device: Device, driver: str) -> dict[str, Any]:
    """The `device` map an expression sees, attributes and capacity split by domain."""
    return {
        "driver": driver,
        "allowMultipleAllocations": False,
        "attributes": _DefaultDict(_by_domain(device.attributes)),
        "capacity": _DefaultDict(_by_domain(device.capacity)),
    }


def _by_domain(values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for qualified, value in values.items():
        domain, _, name = qualified.rpartition("/")
        out.setdefault(domain, {})[name] = value
    return out


class _DefaultDict(dict[str, dict[str, Any]]):
    """A domain the device has nothing in reads as {} (Go's newStringInterfaceMapWithDefault)."""

    def __missing__(self, key: str) -> dict[str, Any]:
        return {}
