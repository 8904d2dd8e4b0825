from __future__ import annotations

import socket

import pytest

from asched.localcluster.ports import LOOPBACK, pick_free_ports


def test_ports_are_distinct_and_bindable() -> None:
    ports = pick_free_ports(8)
    assert len(set(ports)) == 8
    for port in ports:
        with socket.socket() as sock:
            sock.bind((LOOPBACK, port))


def test_zero_ports() -> None:
    assert pick_free_ports(0) == []


def test_negative_count_is_rejected() -> None:
    with pytest.raises(ValueError, match="count"):
        pick_free_ports(-1)
