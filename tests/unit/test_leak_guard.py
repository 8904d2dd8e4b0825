"""The integration tests' socket-leak guard (tests.cluster_fixtures.unclosed_transports):
it finds a transport left open behind its closed event loop, and only that."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from tests.cluster_fixtures import unclosed_transports


def _listener() -> socket.socket:
    # The kernel completes connections into the backlog: nothing needs to accept them.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    return listener


def test_a_transport_left_open_behind_a_closed_loop_is_found() -> None:
    listener = _listener()
    port = listener.getsockname()[1]

    async def open_and_forget() -> Any:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1", port)
        return transport

    loop = asyncio.new_event_loop()
    try:
        transport = loop.run_until_complete(open_and_forget())
    finally:
        loop.close()
    fd = f"fd={transport.get_extra_info('socket').fileno()}>"
    try:
        found = unclosed_transports()
        assert [f for f in found if fd in f], found
    finally:
        # Close it the way the leaking owner should have, so this test leaks nothing.
        transport._sock.close()
        transport._sock = None
        listener.close()
    assert not [f for f in unclosed_transports() if fd in f]


def test_a_transport_closed_before_its_loop_is_not_reported() -> None:
    listener = _listener()
    port = listener.getsockname()[1]

    async def open_and_close() -> None:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.close()
        await writer.wait_closed()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(open_and_close())
    finally:
        loop.close()
        listener.close()
    assert unclosed_transports() == []
