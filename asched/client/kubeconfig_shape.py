"""A kubeconfig's shape, checked before kubernetes_asyncio reads it, so errors name the field.

kubernetes_asyncio's loader assumes a well-formed file: an empty file, a context naming a
user that does not exist or a YAML typo come back as `TypeError: 'NoneType' object is not
iterable` or a parser message over three lines. A start-up error must say in one line
which file and field to fix (asched.base.errors), so the structural rules of client-go's
clientcmd validation are checked here first: every file parses to a mapping whose
clusters, contexts and users are lists of named entries; the selected context exists and
names a cluster (with a server) and a user that exist. The selected entries are returned
for asched.client.static_credentials (certificates, tokens) or, for exec and
auth-provider users, kubernetes_asyncio.

Entries merge as kubernetes_asyncio merges them (the first file that names an entry wins;
the last file that sets current-context wins), so what is checked is what gets loaded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import yaml

from asched.base.errors import StartupError

_LISTS = ("clusters", "contexts", "users")


class KubeconfigError(StartupError):
    """No usable connection settings: missing or malformed kubeconfig, no service account."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One named kubeconfig entry and the file it came from (for relative paths)."""

    file: str
    name: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Selection:
    """The cluster and user entries (their inner `cluster:` / `user:` mappings) that the
    selected context names."""

    cluster: Entry
    user: Entry


@dataclass(slots=True)
class _Merged:
    entries: dict[str, dict[str, Entry]] = field(default_factory=lambda: {k: {} for k in _LISTS})
    current_context: tuple[str, str] | None = None  # (file, name)


def existing_files(paths: str) -> list[str]:
    """The files of a `:`-separated list that exist; KubeconfigError when none does."""
    found = [
        os.path.expanduser(p)
        for p in paths.split(os.pathsep)
        if p and os.path.exists(os.path.expanduser(p))
    ]
    if not found:
        raise KubeconfigError(f"kubeconfig {paths}: no such file")
    return found


def check_shape(files: list[str], context: str | None) -> Selection:
    """The selected context's cluster and user; KubeconfigError naming the file and field
    of the first structural problem."""
    merged = _Merged()
    for path in files:
        _merge(merged, path, _read(path))
    if context is not None:
        name, where = context, "the requested context"
        file = ", ".join(files)
    elif merged.current_context is not None:
        file, name = merged.current_context
        where = "current-context"
    else:
        raise KubeconfigError(f"kubeconfig {', '.join(files)}: current-context: not set")
    ctx = merged.entries["contexts"].get(name)
    if ctx is None:
        raise KubeconfigError(f'kubeconfig {file}: {where}: no context named "{name}" in contexts')
    body = _mapping(ctx.body.get("context"))
    if body is None:
        raise KubeconfigError(
            f"kubeconfig {ctx.file}: contexts[name={name}].context: not a mapping"
        )
    cluster_name = body.get("cluster")
    if not cluster_name:
        raise KubeconfigError(
            f"kubeconfig {ctx.file}: contexts[name={name}].context.cluster: not set"
        )
    cluster = merged.entries["clusters"].get(str(cluster_name))
    if cluster is None:
        raise KubeconfigError(
            f"kubeconfig {ctx.file}: contexts[name={name}].context.cluster: "
            f'no cluster named "{cluster_name}" in clusters'
        )
    server = (_mapping(cluster.body.get("cluster")) or {}).get("server")
    if not server:
        raise KubeconfigError(
            f"kubeconfig {cluster.file}: clusters[name={cluster_name}].cluster.server: not set"
        )
    user_name = body.get("user")
    if not user_name:
        # client-go would connect anonymously; kubernetes_asyncio cannot load such a context.
        raise KubeconfigError(f"kubeconfig {ctx.file}: contexts[name={name}].context.user: not set")
    user = merged.entries["users"].get(str(user_name))
    if user is None:
        raise KubeconfigError(
            f"kubeconfig {ctx.file}: contexts[name={name}].context.user: "
            f'no user named "{user_name}" in users'
        )
    raw_user = user.body.get("user")
    user_body = {} if raw_user is None else _mapping(raw_user)
    if user_body is None:
        raise KubeconfigError(
            f"kubeconfig {user.file}: users[name={user_name}].user: not a mapping"
        )
    cluster_body = _mapping(cluster.body.get("cluster")) or {}
    return Selection(
        Entry(cluster.file, str(cluster_name), cluster_body),
        Entry(user.file, str(user_name), user_body),
    )


def _read(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except OSError as exc:
        raise KubeconfigError(
            f"kubeconfig {path}: cannot read the file: {exc.strerror or exc}"
        ) from exc
    except UnicodeDecodeError as exc:
        raise KubeconfigError(f"kubeconfig {path}: not UTF-8 text: {exc.reason}") from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = " ".join(part for part in (exc.context, exc.problem) if part) or "invalid YAML"
        raise KubeconfigError(f"kubeconfig {path}: YAML syntax error{at}: {what}") from exc
    except yaml.YAMLError as exc:
        raise KubeconfigError(f"kubeconfig {path}: YAML error: {exc}") from exc
    top = _mapping(doc)
    if top is None:
        raise KubeconfigError(
            f"kubeconfig {path}: not a kubeconfig (expected a mapping with clusters, "
            "contexts, users and current-context)"
        )
    return top


def _merge(merged: _Merged, path: str, top: dict[str, Any]) -> None:
    for kind in _LISTS:
        items = top.get(kind) or []
        if not isinstance(items, list):
            raise KubeconfigError(f"kubeconfig {path}: {kind}: expected a list")
        for i, item in enumerate(items):
            entry = _mapping(item)
            if entry is None or not entry.get("name"):
                raise KubeconfigError(
                    f"kubeconfig {path}: {kind}[{i}]: expected a mapping with a name"
                )
            merged.entries[kind].setdefault(
                str(entry["name"]), Entry(path, str(entry["name"]), entry)
            )
    if top.get("current-context"):
        merged.current_context = (path, str(top["current-context"]))


def _mapping(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None
