"""Fan-out of inspector snapshots to browsers, with backpressure that never reaches the
scheduler.

Each client has one slot holding the latest snapshot it has not sent yet. `publish`
overwrites every slot (coalescing: a client that fell behind skips to the newest
snapshot) and wakes the clients; it never awaits, so the snapshot task and the scheduler
never wait for a browser. A client's own task awaits its socket: a slow or stalled browser
only delays itself, and holds at most one pending snapshot (plus what the socket's send
buffer takes before aiohttp's drain blocks that task). The number of clients is capped.
"""

from __future__ import annotations

import anyio

DEFAULT_MAX_CLIENTS = 16


class TooManyClients(Exception):
    """The inspector already serves its maximum of live clients."""


class Slot:
    """One client's pending snapshot: at most one, the latest."""

    __slots__ = ("_latest", "_ready")

    def __init__(self) -> None:
        self._latest: bytes | None = None
        self._ready = anyio.Event()

    def put(self, data: bytes) -> None:
        self._latest = data
        self._ready.set()

    @property
    def pending(self) -> bytes | None:
        return self._latest

    async def take(self) -> bytes:
        """Wait for a snapshot newer than the last one taken."""
        while self._latest is None:
            await self._ready.wait()
            self._ready = anyio.Event()
        data, self._latest = self._latest, None
        return data


class Broadcaster:
    def __init__(self, max_clients: int = DEFAULT_MAX_CLIENTS) -> None:
        self._max_clients = max_clients
        self._slots: set[Slot] = set()
        self.latest: bytes | None = None

    @property
    def clients(self) -> int:
        return len(self._slots)

    def publish(self, data: bytes) -> None:
        self.latest = data
        for slot in self._slots:
            slot.put(data)

    def subscribe(self) -> Slot:
        """A new client's slot, primed with the latest snapshot; raises TooManyClients."""
        if len(self._slots) >= self._max_clients:
            raise TooManyClients(f"the inspector serves at most {self._max_clients} clients")
        slot = Slot()
        if self.latest is not None:
            slot.put(self.latest)
        self._slots.add(slot)
        return slot

    def unsubscribe(self, slot: Slot) -> None:
        self._slots.discard(slot)
