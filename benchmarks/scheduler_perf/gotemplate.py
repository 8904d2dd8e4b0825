"""The part of Go's text/template that scheduler_perf's templates use, evaluated in Python.

scheduler_perf renders every node, pod, PodGroup and claim template with text/template and
the functions of operations.go getTemplateFuncs before decoding the result as YAML. To
read those files unmodified the executor must render them the same way, so this module
implements text/template's grammar as far as the 1.37.2 templates need it: text and
`{{ }}` actions (with `{{-`/`-}}` trimming and comments), pipelines with `|`, parenthesized
pipelines, `$var :=` declarations, `.Field` and `$var.Field` lookups on maps, `if`/`else
if`/`else`/`end`, `range` over integers, lists and maps (with one or two variables), and
the builtins and, or, not, eq, ne, lt, le, gt, ge, len, index. Anything else is an error
naming it, never a silent difference.

Values print as Go's fmt %v prints them (text/template's printValue): a float64 such as
a workload parameter prints as "5", a missing map key as "<no value>".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TypeAlias

#: A template value: what YAML/JSON decoding produces, plus None for "no value".
Value: TypeAlias = object
NO_VALUE = "<no value>"


class TemplateError(ValueError):
    """A template that cannot be parsed or evaluated (names the construct)."""


# -- values printed as Go prints them -------------------------------------------------------


def go_float(v: float) -> str:
    """strconv.FormatFloat(v, 'g', -1, 64), which fmt's %v uses for a float64."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "0"
    digits = Decimal(repr(v)).normalize()
    sign, coeff, exponent = digits.as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(str(d) for d in coeff)
    exp10 = len(mantissa) + exponent - 1
    prefix = "-" if sign else ""
    # strconv's shortest 'g': %e when the exponent is < -4 or >= 6 (eprec 6 for shortest).
    if exp10 < -4 or exp10 >= 6:
        head = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
        return f"{prefix}{head}e{'+' if exp10 >= 0 else '-'}{abs(exp10):02d}"
    if exponent >= 0:
        return prefix + mantissa + "0" * exponent
    point = len(mantissa) + exponent
    if point > 0:
        return f"{prefix}{mantissa[:point]}.{mantissa[point:]}"
    return f"{prefix}0.{'0' * -point}{mantissa}"


def go_print(v: Value) -> str:
    """fmt.Sprint of a template value."""
    if v is None:
        return NO_VALUE
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, str):
        return v
    if isinstance(v, Mapping):
        inner = " ".join(f"{go_print(k)}:{go_print(v[k])}" for k in sorted(v))
        return f"map[{inner}]"
    if isinstance(v, Sequence):
        return "[" + " ".join(go_print(x) for x in v) + "]"
    raise TemplateError(f"cannot print {type(v).__name__}")


def go_json(v: Value) -> str:
    """encoding/json's encoding of a decoded value (map keys sorted, Go's float form)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e21:
            return str(int(v))
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        return "{" + ",".join(f"{go_json(str(k))}:{go_json(v[k])}" for k in sorted(v)) + "}"
    if isinstance(v, Sequence):
        return "[" + ",".join(go_json(x) for x in v) + "]"
    raise TemplateError(f"cannot JSON-encode {type(v).__name__}")


def truth(v: Value) -> bool:
    """text/template's truth: false, 0, nil, empty string/list/map are false."""
    if v is None:
        return False
    if isinstance(v, bool | int | float):
        return bool(v)
    if isinstance(v, str | Mapping | Sequence):
        return len(v) > 0
    return True


# -- scheduler_perf's functions (operations.go getTemplateFuncs) ---------------------------


def to_float(v: Value) -> float:
    """toFloat64: numbers and numeric strings."""
    if isinstance(v, bool):
        raise TemplateError(f"cannot cast {v!r} to float64")
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    raise TemplateError(f"cannot cast {go_print(v)} to float64")


def to_int(v: Value) -> int:
    """toInt: numbers truncate toward zero; strings must be decimal integers."""
    if isinstance(v, bool):
        raise TemplateError(f"cannot cast {v!r} to int")
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"[+-]?\d+", v):
        return int(v)
    raise TemplateError(f"cannot cast {go_print(v)} to int")


def _divide(i: Value, j: Value) -> float:
    d = to_float(j)
    if d == 0:
        raise TemplateError("division by zero")
    return to_float(i) / d


def _mod(a: Value, b: Value) -> int:
    # Go's % truncates toward zero (the sign follows the dividend).
    x, y = int(to_float(a)), int(to_float(b))
    if y == 0:
        raise TemplateError("integer divide by zero")
    return int(math.fmod(x, y))


def _product(numbers: Sequence[Value]) -> float:
    out = 1.0
    for n in numbers:
        out *= to_float(n)
    return out


PERF_FUNCS: Mapping[str, Callable[..., Value]] = {
    "AddFloat": lambda *n: sum(to_float(x) for x in n),
    "AddInt": lambda *n: int(sum(to_float(x) for x in n)),
    "DivideFloat": _divide,
    "DivideInt": lambda i, j: int(_divide(i, j)),
    "Int": to_int,
    "JSON": go_json,
    "Mod": _mod,
    "MultiplyFloat": lambda *n: _product(n),
    "MultiplyInt": lambda *n: int(_product(n)),
    "SubtractFloat": lambda i, j: to_float(i) - to_float(j),
    "SubtractInt": lambda i, j: int(to_float(i) - to_float(j)),
}


def _compare(a: Value, b: Value) -> int:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return (a > b) - (a < b)
    if isinstance(a, str) and isinstance(b, str):
        return (a > b) - (a < b)
    raise TemplateError(f"incompatible types for comparison: {go_print(a)}, {go_print(b)}")


def _index(item: Value, *keys: Value) -> Value:
    for key in keys:
        if isinstance(item, Mapping):
            item = item.get(key)
        elif isinstance(item, Sequence) and isinstance(key, int):
            item = item[key]
        else:
            raise TemplateError(f"cannot index {go_print(item)} with {go_print(key)}")
    return item


def _len(v: Value) -> int:
    if isinstance(v, str | Mapping | Sequence):
        return len(v)
    raise TemplateError(f"len of {go_print(v)}")


BUILTINS: Mapping[str, Callable[..., Value]] = {
    "eq": lambda a, *bs: any(_compare(a, b) == 0 for b in bs),
    "ne": lambda a, b: _compare(a, b) != 0,
    "lt": lambda a, b: _compare(a, b) < 0,
    "le": lambda a, b: _compare(a, b) <= 0,
    "gt": lambda a, b: _compare(a, b) > 0,
    "ge": lambda a, b: _compare(a, b) >= 0,
    "not": lambda a: not truth(a),
    "len": _len,
    "index": _index,
}
# and/or evaluate lazily in Go but return the deciding operand; with the side-effect-free
# functions above, evaluating every argument first gives the same result.
LOGIC = ("and", "or")


# -- the parse tree -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Field:
    """`.A.B` (on dot) or `$x.A.B` (on a variable)."""

    variable: str | None
    path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Literal:
    value: Value


@dataclass(frozen=True, slots=True)
class Ident:
    name: str


@dataclass(frozen=True, slots=True)
class Pipeline:
    decl: tuple[str, ...]  # variables declared with :=
    assign: bool  # `=` instead of `:=`
    commands: tuple[tuple[Operand, ...], ...]


Operand: TypeAlias = Field | Literal | Ident | Pipeline


@dataclass(slots=True)
class Text:
    text: str


@dataclass(slots=True)
class Action:
    pipe: Pipeline


@dataclass(slots=True)
class If:
    pipe: Pipeline
    then: list[Node] = field(default_factory=list)
    otherwise: list[Node] = field(default_factory=list)


@dataclass(slots=True)
class Range:
    pipe: Pipeline
    body: list[Node] = field(default_factory=list)
    otherwise: list[Node] = field(default_factory=list)


Node: TypeAlias = Text | Action | If | Range

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>"(?:[^"\\]|\\.)*")
    | (?P<raw>`[^`]*`)
    | (?P<num>[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?(?![\w.]))
    | (?P<decl>:=)
    | (?P<op>[()|=,])
    | (?P<var>\$\w*(?:\.\w+)*)
    | (?P<field>(?:\.\w+)+|\.)
    | (?P<ident>[A-Za-z_]\w*)
    )""",
    re.VERBOSE,
)


def _tokens(source: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(source):
        if source[pos:].strip() == "":
            break
        m = _TOKEN.match(source, pos)
        if m is None or m.lastgroup is None:
            raise TemplateError(f"unexpected {source[pos:].strip()[:20]!r} in {{{{{source}}}}}")
        out.append((m.lastgroup, m.group(m.lastgroup)))
        pos = m.end()
    return out


class _PipeParser:
    def __init__(self, tokens: list[tuple[str, str]], source: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.source = source

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise TemplateError(f"unexpected end of {{{{{self.source}}}}}")
        self.pos += 1
        return tok

    def pipeline(self, *, allow_decl: bool) -> Pipeline:
        decl: list[str] = []
        assign = False
        if allow_decl:
            # `$x :=`, `$i, $v :=` or `$x =`
            save = self.pos
            names: list[str] = []
            while (tok := self.peek()) is not None and tok[0] == "var" and "." not in tok[1]:
                names.append(self.take()[1])
                nxt = self.peek()
                if nxt == ("op", ","):
                    self.take()
                    continue
                break
            nxt = self.peek()
            if names and nxt is not None and (nxt[0] == "decl" or nxt == ("op", "=")):
                assign = nxt[0] == "op"
                self.take()
                decl = names
            else:
                self.pos = save
        commands: list[tuple[Operand, ...]] = []
        while True:
            commands.append(self.command())
            tok = self.peek()
            if tok == ("op", "|"):
                self.take()
                continue
            break
        return Pipeline(tuple(decl), assign, tuple(commands))

    def command(self) -> tuple[Operand, ...]:
        operands: list[Operand] = []
        while (tok := self.peek()) is not None and tok not in (("op", "|"), ("op", ")")):
            operands.append(self.operand())
        if not operands:
            raise TemplateError(f"empty command in {{{{{self.source}}}}}")
        return tuple(operands)

    def operand(self) -> Operand:
        kind, text = self.take()
        if kind == "op" and text == "(":
            inner = self.pipeline(allow_decl=False)
            if self.take() != ("op", ")"):
                raise TemplateError(f"unclosed ( in {{{{{self.source}}}}}")
            return inner
        if kind == "str":
            return Literal(json.loads(text))
        if kind == "raw":
            return Literal(text[1:-1])
        if kind == "num":
            return Literal(float(text) if re.search(r"[.eE]", text) else int(text))
        if kind == "var":
            name, *path = text.split(".")
            return Field(name, tuple(path))
        if kind == "field":
            return Field(None, tuple(p for p in text.split(".") if p))
        if kind == "ident":
            if text in ("true", "false"):
                return Literal(text == "true")
            if text == "nil":
                return Literal(None)
            return Ident(text)
        raise TemplateError(f"unexpected {text!r} in {{{{{self.source}}}}}")


def _parse_pipe(source: str, *, allow_decl: bool = True) -> Pipeline:
    parser = _PipeParser(_tokens(source), source)
    pipe = parser.pipeline(allow_decl=allow_decl)
    if parser.peek() is not None:
        raise TemplateError(f"unexpected {parser.peek()!r} in {{{{{source}}}}}")
    return pipe


_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)


def parse(text: str) -> list[Node]:
    """The parse tree of a whole template."""
    root: list[Node] = []
    # (list being filled, the If/Range that owns it, which branch)
    stack: list[tuple[list[Node], If | Range | _Chain | None]] = [(root, None)]
    pos = 0
    trim_next = False
    for m in _ACTION.finditer(text):
        chunk = text[pos : m.start()]
        if trim_next:
            chunk = chunk.lstrip()
        if m.group(1):
            chunk = chunk.rstrip()
        if chunk:
            stack[-1][0].append(Text(chunk))
        trim_next = bool(m.group(3))
        pos = m.end()
        body = m.group(2).strip()
        if body.startswith("/*"):
            continue
        word, _, rest = body.partition(" ")
        if word == "if":
            node = If(_parse_pipe(rest))
            stack[-1][0].append(node)
            stack.append((node.then, node))
        elif word == "range":
            rnode = Range(_parse_pipe(rest))
            stack[-1][0].append(rnode)
            stack.append((rnode.body, rnode))
        elif word == "else":
            _, owner = stack.pop()
            if owner is None or isinstance(owner, _Chain):
                raise TemplateError("{{else}} without {{if}} or {{range}}")
            target = owner.otherwise
            if rest.startswith("if "):
                # {{else if x}} is {{else}}{{if x}} closed by the same {{end}}.
                # The marker under it makes {{end}} close the outer node too.
                nested = If(_parse_pipe(rest[3:]))
                target.append(nested)
                stack.append((target, _Chain(owner)))
                stack.append((nested.then, nested))
            else:
                stack.append((target, owner))
        elif word == "end":
            _, closed = stack.pop()
            if closed is None:
                raise TemplateError("{{end}} without {{if}} or {{range}}")
            while isinstance(stack[-1][1], _Chain):
                stack.pop()
        elif word in ("define", "template", "block", "with", "break", "continue"):
            raise TemplateError(f"unsupported action {{{{{word}}}}}")
        else:
            stack[-1][0].append(Action(_parse_pipe(body)))
    if len(stack) != 1:
        raise TemplateError("unclosed {{if}} or {{range}}")
    tail = text[pos:]
    if trim_next:
        tail = tail.lstrip()
    if tail:
        root.append(Text(tail))
    return root


class _Chain:
    """Stack marker of an {{else if}}: its {{end}} also closes the outer If."""

    def __init__(self, owner: If | Range) -> None:
        self.owner = owner


# -- evaluation ------------------------------------------------------------------------------


class _Scope:
    def __init__(self, root: Value) -> None:
        self.frames: list[dict[str, Value]] = [{"$": root}]

    def get(self, name: str) -> Value:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        raise TemplateError(f"undefined variable: {name}")

    def set(self, name: str, value: Value) -> None:
        for frame in reversed(self.frames):
            if name in frame:
                frame[name] = value
                return
        raise TemplateError(f"undefined variable: {name}")


def _lookup(value: Value, path: Sequence[str]) -> Value:
    for key in path:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise TemplateError(f"can't evaluate field {key} in {go_print(value)}")
        value = value.get(key)
    return value


class _Evaluator:
    def __init__(self, root: Value) -> None:
        self.scope = _Scope(root)
        self.out: list[str] = []

    def run(self, nodes: Sequence[Node], dot: Value) -> None:
        for node in nodes:
            if isinstance(node, Text):
                self.out.append(node.text)
            elif isinstance(node, Action):
                value = self.pipe(node.pipe, dot)
                if not node.pipe.decl:
                    self.out.append(go_print(value))
            elif isinstance(node, If):
                self.scope.frames.append({})
                try:
                    chosen = node.then if truth(self.pipe(node.pipe, dot)) else node.otherwise
                    self.run(chosen, dot)
                finally:
                    self.scope.frames.pop()
            else:
                self.range(node, dot)

    def range(self, node: Range, dot: Value) -> None:
        pipe = Pipeline((), False, node.pipe.commands)
        value = self.pipe(pipe, dot)
        items: list[tuple[Value, Value]]
        if isinstance(value, bool | float):
            raise TemplateError(f"range can't iterate over {go_print(value)}")
        if isinstance(value, int):
            items = [(i, i) for i in range(value)]
        elif isinstance(value, Mapping):
            items = [(k, value[k]) for k in sorted(value)]
        elif isinstance(value, Sequence) and not isinstance(value, str):
            items = list(enumerate(value))
        elif value is None:
            items = []
        else:
            raise TemplateError(f"range can't iterate over {go_print(value)}")
        if not items:
            self.run(node.otherwise, dot)
            return
        names = node.pipe.decl
        for key, elem in items:
            frame: dict[str, Value] = {}
            if len(names) == 1:
                # Go: one variable gets the element (for an int range, the int itself).
                frame[names[0]] = elem
            elif len(names) == 2:
                frame[names[0]], frame[names[1]] = key, elem
            self.scope.frames.append(frame)
            try:
                self.run(node.body, elem)
            finally:
                self.scope.frames.pop()

    def pipe(self, pipe: Pipeline, dot: Value) -> Value:
        value: Value = None
        piped = False
        for command in pipe.commands:
            value = self.command(command, dot, value if piped else _NOTHING)
            piped = True
        for name in pipe.decl:
            if pipe.assign:
                self.scope.set(name, value)
            else:
                self.scope.frames[-1][name] = value
        return value

    def command(self, operands: Sequence[Operand], dot: Value, piped: Value) -> Value:
        head = operands[0]
        if isinstance(head, Ident):
            args = [self.operand(o, dot) for o in operands[1:]]
            if piped is not _NOTHING:
                args.append(piped)
            return self.call(head.name, args)
        if len(operands) > 1 or piped is not _NOTHING:
            raise TemplateError(f"can't give argument to non-function {head}")
        return self.operand(head, dot)

    def operand(self, operand: Operand, dot: Value) -> Value:
        if isinstance(operand, Literal):
            return operand.value
        if isinstance(operand, Field):
            base = dot if operand.variable is None else self.scope.get(operand.variable)
            return _lookup(base, operand.path)
        if isinstance(operand, Pipeline):
            return self.pipe(operand, dot)
        return self.call(operand.name, [])

    def call(self, name: str, args: list[Value]) -> Value:
        if name in LOGIC:
            if not args:
                raise TemplateError(f"wrong number of args for {name}: want at least 1 got 0")
            for arg in args[:-1]:
                if truth(arg) == (name == "or"):
                    return arg
            return args[-1]
        fn = PERF_FUNCS.get(name) or BUILTINS.get(name)
        if fn is None:
            raise TemplateError(f'function "{name}" not defined')
        try:
            return fn(*args)
        except TypeError as err:
            raise TemplateError(f"wrong arguments for {name}: {err}") from None


_NOTHING: Value = object()


@dataclass(frozen=True)
class Template:
    """A parsed template; render() may be called many times with different data."""

    name: str
    nodes: list[Node]

    @classmethod
    def parse(cls, name: str, text: str) -> Template:
        try:
            return cls(name, parse(text))
        except TemplateError as err:
            raise TemplateError(f"{name}: {err}") from None

    def render(self, data: Mapping[str, Value]) -> str:
        evaluator = _Evaluator(data)
        try:
            evaluator.run(self.nodes, data)
        except TemplateError as err:
            raise TemplateError(f"{self.name}: {err}") from None
        return "".join(evaluator.out)
