from __future__ import annotations

import pytest

from asched.localcluster.auth import (
    SCHEDULER_USER,
    Identity,
    admin_identity,
    new_token,
    render_token_file,
    scheduler_identity,
)


@pytest.mark.parametrize(
    ("identity", "line"),
    [
        pytest.param(Identity("u", "uid1", "tok"), "tok,u,uid1", id="no-groups"),
        pytest.param(Identity("u", "uid1", "tok", ("g1",)), 'tok,u,uid1,"g1"', id="one-group"),
        pytest.param(
            Identity("u", "uid1", "tok", ("g1", "g2")), 'tok,u,uid1,"g1,g2"', id="two-groups"
        ),
    ],
)
def test_token_file_line(identity: Identity, line: str) -> None:
    assert render_token_file([identity]) == line + "\n"


@pytest.mark.parametrize("bad", ["a,b", 'a"b', "a\nb"])
def test_token_file_rejects_separators(bad: str) -> None:
    with pytest.raises(ValueError, match="may not contain"):
        render_token_file([Identity(bad, "uid", "tok")])


def test_scheduler_has_no_groups_and_admin_is_master() -> None:
    assert scheduler_identity().user == SCHEDULER_USER
    assert scheduler_identity().groups == ()
    assert admin_identity().groups == ("system:masters",)


def test_tokens_are_random_and_file_safe() -> None:
    tokens = {new_token() for _ in range(50)}
    assert len(tokens) == 50
    assert all(len(t) >= 40 and "," not in t for t in tokens)
