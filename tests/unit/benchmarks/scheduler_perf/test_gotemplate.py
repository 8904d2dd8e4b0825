"""The Go text/template subset renders scheduler_perf's templates as Go does."""

from __future__ import annotations

import pytest

from benchmarks.scheduler_perf.gotemplate import Template, TemplateError, go_float, go_json


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5.0, "5"),
        (0.5, "0.5"),
        (123456.0, "123456"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-3.25, "-3.25"),
    ],
    ids=["integral", "fraction", "six-digits", "million", "seven-digits", "small", "tiny", "neg"],
)
def test_floats_print_as_go_percent_v(value: float, expected: str) -> None:
    assert go_float(value) == expected


def render(text: str, **data: object) -> str:
    return Template.parse("t.yaml", text).render(data)


@pytest.mark.parametrize(
    ("text", "data", "expected"),
    [
        ("name: pod-{{.Index}}", {"Index": 7}, "name: pod-7"),
        ("{{ .Index }}", {"Index": 3}, "3"),
        ("gang-{{DivideInt .Index .podsPerGroup}}", {"Index": 8, "podsPerGroup": 3.0}, "gang-2"),
        ("{{ Mod .Index 12 }}", {"Index": 25}, "1"),
        ("{{AddInt 8000 (Mod .Index (DivideInt .p .n))}}", {"Index": 5, "p": 8, "n": 2}, "8001"),
        ("{{if .priority}}{{AddInt 0 .priority}}{{else}}none{{end}}", {"priority": 10.0}, "10"),
        ("{{if .priority}}{{AddInt 0 .priority}}{{else}}none{{end}}", {}, "none"),
        ('{{if eq .class "a"}}A{{else if .b}}B{{else}}C{{end}}', {"class": "x", "b": 1}, "B"),
        ("{{$n := or .numDevices 3}}{{range $i := ($n | Int)}}[{{$i}}]{{end}}", {}, "[0][1][2]"),
        ("{{range 2}}<{{.}}>{{end}}", {}, "<0><1>"),
        (
            "{{$s := (or .sel nil) | JSON}}{{$s}}",
            {"sel": {"b": 1.0, "a": ["x"]}},
            '{"a":["x"],"b":1}',
        ),
        ("{{$s := (or .sel nil) | JSON}}{{$s}}", {}, "null"),
        ("{{.missing}}", {}, "<no value>"),
        ("a {{- /* note */ -}} b", {}, "ab"),
        ("{{if ge $.x 2}}big{{end}}", {"x": 3}, "big"),
    ],
    ids=[
        "index",
        "spaced",
        "divide-float-param",
        "mod",
        "nested-calls",
        "if-true",
        "if-missing",
        "else-if",
        "range-var-int",
        "range-int-dot",
        "json-map",
        "json-nil",
        "missing-key",
        "trim-and-comment",
        "root-variable",
    ],
)
def test_render(text: str, data: dict[str, object], expected: str) -> None:
    assert render(text, **data) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{{Nope 1}}", 'function "Nope" not defined'),
        ("{{with .x}}{{end}}", "unsupported action {{with}}"),
        ("{{if .x}}open", "unclosed"),
        ("{{end}}", "{{end}} without"),
        ("{{DivideInt 1 0}}", "division by zero"),
    ],
    ids=["unknown-function", "unsupported-action", "unclosed", "stray-end", "divide-by-zero"],
)
def test_errors_name_the_construct(text: str, message: str) -> None:
    with pytest.raises(TemplateError, match=r"t\.yaml") as err:
        render(text)
    assert message in str(err.value)


def test_go_json_orders_keys_and_prints_integral_floats_as_ints() -> None:
    assert go_json({"z": 2.0, "a": [1.5, True, None, "s"]}) == '{"a":[1.5,true,null,"s"],"z":2}'
