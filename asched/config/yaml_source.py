"""Read a config file's text into plain Python values, strictly.

kube-scheduler decodes its config with sigs.k8s.io/yaml in strict mode, which rejects a
key given twice in one mapping; PyYAML silently keeps the last one, so the loader here
checks for duplicates itself. Syntax errors become a ConfigError naming the line and
column (1-based, as editors count). Exactly one YAML document is expected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from asched.config.errors import ConfigError

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """SafeLoader (C-accelerated when available) that refuses duplicate mapping keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key; the base class reports it
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen[key] = key_node
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def read_source(source: str | Path | bytes) -> str:
    """A Path is read as a UTF-8 file; str and bytes are the document itself."""
    if isinstance(source, Path):
        try:
            return source.read_text(encoding="utf-8")
        except OSError as exc:
            # The error names the file already (ConfigError.filename); strerror says why.
            why = exc.strerror or str(exc)
            raise ConfigError([("", f"cannot read the file: {why}")], str(source)) from exc
        except UnicodeDecodeError as exc:
            raise ConfigError([("", f"config is not UTF-8: {exc}")], str(source)) from exc
    if isinstance(source, bytes):
        try:
            return source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError([("", f"config is not UTF-8: {exc}")]) from exc
    return source


def parse_yaml(text: str, filename: str = "") -> Any:
    """The single YAML document in `text` as dicts, lists and scalars."""
    try:
        documents = list(yaml.load_all(text, Loader=_StrictLoader))
    except yaml.MarkedYAMLError as exc:
        raise ConfigError([("", _describe(exc))], filename) from exc
    except yaml.YAMLError as exc:
        raise ConfigError([("", f"YAML error: {exc}")], filename) from exc
    if not documents or documents == [None]:
        raise ConfigError([("", "the config is empty")], filename)
    if len(documents) != 1:
        raise ConfigError([("", f"expected one YAML document, found {len(documents)}")], filename)
    return documents[0]


def _describe(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "?"
    what = " ".join(part for part in (exc.context, exc.problem) if part)
    return f"YAML syntax error at {where}: {what or 'invalid YAML'}"
