"""LineSplitter: complete lines out, whatever the chunk boundaries."""

from __future__ import annotations

import pytest

from asched.client.lines import LineSplitter


@pytest.mark.parametrize(
    ("chunks", "lines", "pending"),
    [
        pytest.param([b'{"a":1}\n'], [b'{"a":1}'], b"", id="one-line-one-chunk"),
        pytest.param([b"a\nb\nc\n"], [b"a", b"b", b"c"], b"", id="many-lines-one-chunk"),
        pytest.param([b"ab", b"cd", b"e\n"], [b"abcde"], b"", id="line-over-three-chunks"),
        pytest.param([b"a\nb", b"c\nd"], [b"a", b"bc"], b"d", id="boundary-inside-lines"),
        pytest.param([b"a", b"\n"], [b"a"], b"", id="newline-alone"),
        pytest.param([b"\n\na\n\n"], [b"a"], b"", id="blank-lines-dropped"),
        pytest.param([b"", b"a", b"", b"\n"], [b"a"], b"", id="empty-chunks"),
        pytest.param([b"x" * 300_000, b"\n"], [b"x" * 300_000], b"", id="line-above-aiohttp-limit"),
        pytest.param([b"a\n", b"partial"], [b"a"], b"partial", id="cut-off-tail"),
    ],
)
def test_feed_yields_complete_lines(
    chunks: list[bytes], lines: list[bytes], pending: bytes
) -> None:
    splitter = LineSplitter()

    got = [line for chunk in chunks for line in splitter.feed(chunk)]

    assert got == lines
    assert splitter.pending == pending


def test_every_split_point_gives_the_same_lines() -> None:
    stream = b'{"type":"ADDED"}\n{"type":"MODIFIED","x":"\\n"}\n{"type":"DELETED"}\n'
    for cut in range(len(stream) + 1):
        splitter = LineSplitter()
        got = splitter.feed(stream[:cut]) + splitter.feed(stream[cut:])
        assert got == stream.split(b"\n")[:3], cut
