"""Nominator: one nomination per pod, overrides, clears, and updates that keep it."""

from __future__ import annotations

import pytest

from asched.backend.nominator import Nominator
from tests.builders import make_pod


def _names(nom: Nominator, node: str) -> list[str]:
    return [p.name for p in nom.nominated_pods_for_node(node)]


@pytest.mark.parametrize(
    ("status_node", "override", "expected_node"),
    [
        pytest.param("n1", None, "n1", id="from-status"),
        pytest.param("", "n2", "n2", id="override-without-status"),
        pytest.param("n1", "n2", "n2", id="override-beats-status"),
        pytest.param("n1", "", "", id="empty-override-clears"),
        pytest.param("", None, "", id="nothing-to-nominate"),
    ],
)
def test_add_nominated(status_node: str, override: str | None, expected_node: str) -> None:
    builder = make_pod("p")
    if status_node:
        builder = builder.nominated(status_node)
    pod = builder.obj()
    nom = Nominator()
    nom.add_nominated(pod, override)
    assert nom.nominated_node(pod.uid) == expected_node
    for node in ("n1", "n2"):
        assert _names(nom, node) == (["p"] if node == expected_node else [])


def test_bound_pod_is_not_nominated() -> None:
    nom = Nominator()
    nom.add_nominated(make_pod("p").node("n1").nominated("n1").obj())
    assert len(nom) == 0


def test_renomination_moves_the_pod() -> None:
    nom = Nominator()
    pod = make_pod("p").obj()
    nom.add_nominated(pod, "n1")
    nom.add_nominated(pod, "n2")
    assert (_names(nom, "n1"), _names(nom, "n2")) == ([], ["p"])


def test_pods_listed_in_nomination_order() -> None:
    nom = Nominator()
    for name in ("c", "a", "b"):
        nom.add_nominated(make_pod(name).obj(), "n1")
    assert _names(nom, "n1") == ["c", "a", "b"]


@pytest.mark.parametrize(
    ("old_status", "new_status", "expected_node"),
    [
        pytest.param("", "", "mem", id="keeps-in-memory-nomination"),
        pytest.param("", "n2", "n2", id="status-added"),
        pytest.param("mem", "n2", "n2", id="status-changed"),
        pytest.param("mem", "", "", id="status-removed-clears"),
    ],
)
def test_update_nominated(old_status: str, new_status: str, expected_node: str) -> None:
    old_b, new_b = make_pod("p").uid("u1"), make_pod("p").uid("u1").label("v", "2")
    if old_status:
        old_b = old_b.nominated(old_status)
    if new_status:
        new_b = new_b.nominated(new_status)
    old, new = old_b.obj(), new_b.obj()
    nom = Nominator()
    nom.add_nominated(old, "mem")
    nom.update_nominated(old, new)
    assert nom.nominated_node("u1") == expected_node
    if expected_node:
        (latest,) = nom.nominated_pods_for_node(expected_node)
        assert latest is new


def test_delete_nominated() -> None:
    nom = Nominator()
    pod = make_pod("p").obj()
    nom.add_nominated(pod, "n1")
    nom.delete_nominated(pod)
    nom.delete_nominated(pod)
    assert (len(nom), _names(nom, "n1"), nom.nominated_node(pod.uid)) == (0, [], "")
