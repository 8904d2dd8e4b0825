"""Identities of the local control plane and the static token file that defines them.

The scheduler must run as its own user with only the RBAC that asched ships, never as an
admin: a test that schedules as ``system:masters`` cannot notice a missing RBAC rule. So the
token file holds two users: an admin (group ``system:masters``) for the harness and the
controllers, and ``system:asched`` with no group beyond ``system:authenticated``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field

ADMIN_USER = "asched-admin"
SCHEDULER_USER = "system:asched"


@dataclass(frozen=True, slots=True)
class Identity:
    """A user of kube-apiserver's static token authenticator."""

    user: str
    uid: str
    token: str
    groups: tuple[str, ...] = field(default=())


def new_token() -> str:
    """A random bearer token; URL-safe base64, so it never contains the file's commas."""
    return secrets.token_urlsafe(32)


def admin_identity(token: str | None = None) -> Identity:
    return Identity(ADMIN_USER, "asched-admin-uid", token or new_token(), ("system:masters",))


def scheduler_identity(token: str | None = None) -> Identity:
    return Identity(SCHEDULER_USER, "asched-scheduler-uid", token or new_token())


def render_token_file(identities: Iterable[Identity]) -> str:
    """Render ``--token-auth-file`` lines: ``token,user,uid[,"group1,group2"]``."""
    lines = []
    for ident in identities:
        for value in (ident.token, ident.user, ident.uid, *ident.groups):
            if any(c in value for c in ',"\n'):
                raise ValueError(f"token file field may not contain comma/quote/newline: {value!r}")
        line = f"{ident.token},{ident.user},{ident.uid}"
        if ident.groups:
            line += ',"' + ",".join(ident.groups) + '"'
        lines.append(line)
    return "\n".join(lines) + "\n"
