"""Pick free loopback TCP ports for the control-plane components.

Several clusters (parallel test runs, a CLI cluster beside a test session) must coexist on
one machine, so no port is fixed. All sockets of one request are held open until every port
is chosen, so the ports of one cluster are distinct; another process could still take one
before the component binds it, which start() reports as a component that exited early.
"""

from __future__ import annotations

import socket
from contextlib import ExitStack

LOOPBACK = "127.0.0.1"


def pick_free_ports(count: int, host: str = LOOPBACK) -> list[int]:
    """Return *count* distinct TCP ports that were free on *host* a moment ago."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    with ExitStack() as stack:
        ports: list[int] = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))
            ports.append(int(sock.getsockname()[1]))
        return ports
