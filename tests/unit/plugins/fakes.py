"""The plugin test doubles, which ship in the SDK (asched.testing.fakes); re-exported so
the suite's `from tests.unit.plugins.fakes import FakeHandle` keeps working."""

from asched.testing.fakes import (
    FakeClient,
    FakeEvents,
    FakeHandle,
    FakeSnapshot,
    RecordingClient,
    node_info,
)

__all__ = [
    "FakeClient",
    "FakeEvents",
    "FakeHandle",
    "FakeSnapshot",
    "RecordingClient",
    "node_info",
]
