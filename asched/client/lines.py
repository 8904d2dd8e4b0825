"""Splitting a watch stream's byte chunks into complete JSON lines.

A watch response is newline-delimited JSON, but the network hands it over in arbitrary
chunks: one chunk may hold many events, and one event (a large pod) may span many chunks.
aiohttp's own readline() refuses lines above 128 KiB, which real objects can exceed, so
the split is done here. Guarantee: every yielded line is exactly one complete line without
its newline, blank lines are dropped, and the work is linear in the bytes received (a long
line arriving in pieces is joined once, not re-copied per chunk).
"""

from __future__ import annotations


class LineSplitter:
    __slots__ = ("_pending",)

    def __init__(self) -> None:
        # Pieces of the current, unfinished line.
        self._pending: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines that *chunk* completes, in order."""
        end = chunk.rfind(b"\n")
        if end < 0:
            if chunk:
                self._pending.append(chunk)
            return []
        head = chunk[:end]
        if self._pending:
            self._pending.append(head)
            head = b"".join(self._pending)
            self._pending.clear()
        rest = chunk[end + 1 :]
        if rest:
            self._pending.append(rest)
        return [line for line in head.split(b"\n") if line.strip()]

    @property
    def pending(self) -> bytes:
        """Bytes of a line not yet terminated (non-empty at EOF means a cut-off event)."""
        return b"".join(self._pending)
