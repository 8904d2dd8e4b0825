"""DRA device selectors: CEL expressions over one `device`, compiled once and cached.

Follows k8s.io/dynamic-resource-allocation/cel (compiler.CompileCELExpression,
CompilationResult.DeviceMatches): the only variable is `device`, with `driver`,
`attributes[domain][name]`, `capacity[domain][name]` (quantities) and
`allowMultipleAllocations`; an unqualified attribute name belongs to the driver's domain;
a domain the device has nothing in reads as an empty map. Kubernetes' quantity library is
provided for capacities: `quantity("1Gi")`, `compareTo`, `isGreaterThan`, `isLessThan`,
`asInteger`, `asApproximateFloat`, `add`, `sub`; and the semver library for version
attributes: `semver(s[, normalize])`, `isSemver`, `major`, `minor`, `patch`, `compareTo`,
`isGreaterThan`, `isLessThan`.

Runtime: the `common-expression-language` package (Rust CEL, about 1 µs an evaluation
where the pure-Python `cel-python` took 250-700 µs on the same selectors). It does not
type-check, so two things Go refuses at compile time are caught here instead: a reference
to any variable but `device` is a compile error (Go: "undeclared reference"), and a result
that is not a bool is an evaluation error. Quantities are exact integers (rounded up like
Quantity.Value), so comparing one with a plain int works where Go would refuse to compile.
Runtime errors read as cel-go's (go_runtime_error): ordering or arithmetic across types
(a string attribute `< 1`) is "no such overload", while `==` across types is false in
both (heterogeneous equality); a result that is not a bool, division or modulus by zero
and integer overflow have cel-go's texts, and an error raised by one of our functions
(semver's parse errors) is that function's own text. Version attributes and the semver
library are semver.py: a version is never `==` to a string (false here, "no such
overload" in cel-go). The library prints the exception of a Python function it called to
stderr before raising it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from asched.api.dra import Device
from asched.api.quantity import QuantityError, parse_quantity
from asched.plugins.dynamicresources import semver

DEVICE_VAR = "device"


class CelRuntimeError(Exception):
    """An expression failed while evaluating one device (Go: "CEL runtime error")."""


def _quantity(text: str) -> int:
    try:
        return parse_quantity(text)
    except QuantityError as exc:
        raise ValueError(str(exc)) from None


def _compare_to(a: Any, b: Any) -> int:
    """Quantity.compareTo, or Semver.compareTo when the operands are versions."""
    both = semver.versions(a, b)
    if both is not None:
        return both[0].compare(both[1])
    return int(a > b) - int(a < b)


_FUNCTIONS: dict[str, Any] = {
    "quantity": _quantity,
    "compareTo": _compare_to,
    "isGreaterThan": lambda a, b: _compare_to(a, b) > 0,
    "isLessThan": lambda a, b: _compare_to(a, b) < 0,
    "semver": semver.semver,
    "isSemver": semver.is_semver,
    "major": semver.part("major", 0),
    "minor": semver.part("minor", 1),
    "patch": semver.part("patch", 2),
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
        attrs = tuple(sorted((k, type(v).__name__, v) for k, v in _cel_attributes(device).items()))
        caps = tuple(sorted(device.capacity.items()))
        return _evaluate(self, driver, attrs, caps, device.allow_multiple_allocations)

    def evaluate(self, device: Device, driver: str) -> bool:
        import cel  # deferred: see compile_expression

        ctx = cel.Context()
        ctx.add_variable(DEVICE_VAR, device_variable(device, driver))
        for name, fn in _FUNCTIONS.items():
            ctx.add_function(name, fn)
        try:
            result = self.program.execute(ctx)
        except KeyError as exc:
            # cel.EnhanceRuntimeError's advice follows cel-go's "no such key".
            raise CelRuntimeError(
                f"no such key: {exc.args[0]}. consider using CEL optional chaining "
                "(.? followed by orValue()) or guarding the check with has() for "
                "optional fields"
            ) from None
        except (RuntimeError, ValueError, TypeError, ArithmeticError, IndexError) as exc:
            raise CelRuntimeError(go_runtime_error(exc)) from None
        if not isinstance(result, bool):
            raise CelRuntimeError(_not_bool(result))
        return result


def _not_bool(result: object) -> str:
    """CompilationResult.DeviceMatches when ConvertToNative(bool) fails. Only dynamic
    values (attributes) get here in Go: a result of a static type that is not bool is a
    compile error there ("must evaluate to bool or the unknown type, not double")."""
    prefix = "CEL result of type"
    if semver.decode_or_none(result) is not None:
        return (
            f"{prefix} kubernetes.Semver could not be converted to bool: type conversion "
            "error from 'Semver' to 'bool'"
        )
    if isinstance(result, str):
        return (
            f"{prefix} string could not be converted to bool: unsupported native "
            "conversion from string to 'bool'"
        )
    kind = {"float": "double", "dict": "map", "NoneType": "null_type"}.get(
        type(result).__name__, type(result).__name__
    )
    return (
        f"{prefix} {kind} could not be converted to bool: unsupported type conversion "
        f"from '{kind}' to bool"
    )


# How the Rust library reports an exception of a Python function it called.
_PYTHON_FUNCTION_ERROR = re.compile(
    r"Function '\w+' error: Python function call failed: (\w+): (.*)\. Check function "
    r"arguments and their types\.$",
    re.DOTALL,
)


def go_runtime_error(exc: BaseException) -> str:
    """The Rust library's evaluation error in cel-go's words (common/types/err.go):
    operands of types no overload accepts are "no such overload" in cel-go however the
    library phrases it, and arithmetic failures have cel-go's short texts. Anything else
    keeps the library's text."""
    text = str(exc)
    raised = _PYTHON_FUNCTION_ERROR.match(text)
    if raised is not None:
        # One of our functions (quantity, semver, ...) raised: its own words are Go's.
        kind, text = raised.group(1), raised.group(2)
        if kind == "TypeError" and not text.startswith("no such overload"):
            return "no such overload"
        return text
    if isinstance(exc, ZeroDivisionError):
        return "modulus by zero" if "modulo" in text else "division by zero"
    if isinstance(exc, OverflowError):
        return "integer overflow"
    if isinstance(exc, TypeError) and text.startswith(
        ("No such overload", "Unsupported operation")
    ):
        return "no such overload"
    for kind in ("int", "uint", "double"):
        if text.startswith(f"Function '{kind}' error: string parse error"):
            return f"type conversion error from 'string' to '{kind}'"
    return text


@lru_cache(maxsize=16384)
def _evaluate(
    compiled: Compiled,
    driver: str,
    attributes: tuple[tuple[str, str, Any], ...],
    capacity: tuple[tuple[str, int], ...],
    multiple: bool,
) -> bool:
    """Compiled.evaluate memoized by device content (errors are raised, not cached)."""
    attrs = {name: value for name, _, value in attributes}
    device = Device("", attrs, dict(capacity), allow_multiple_allocations=multiple)
    return compiled.evaluate(device, driver)


def _go_issue(message: str) -> str:
    """The library's parse error minus its own preamble: what cel-go prints from ERROR: on."""
    _, sep, rest = message.partition("ERROR:")
    return f"ERROR:{rest}" if sep else message


@lru_cache(maxsize=1024)
def compile_expression(expression: str) -> Compiled:
    """Compile once per distinct expression (Go's cel.Cache.GetOrCompile)."""
    # Imported on first use, not with the plugin: the package's __init__ loads its command
    # line (typer, rich, prompt_toolkit), about 0.2 s of CPU that every start-up paid
    # although most clusters never compile a device selector.
    import cel

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
        "allowMultipleAllocations": device.allow_multiple_allocations,
        "attributes": _DefaultDict(_by_domain(_cel_attributes(device))),
        "capacity": _DefaultDict(_by_domain(device.capacity)),
    }


def _cel_attributes(device: Device) -> Mapping[str, Any]:
    """Attribute values as CEL holds them: versions marked (semver.py)."""
    if not device.versions:
        return device.attributes
    return {
        k: semver.encode_attribute(str(v)) if k in device.versions else v
        for k, v in device.attributes.items()
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
