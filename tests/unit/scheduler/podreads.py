"""A KubeClient for the binding cycle's check (asched.scheduler.bindcheck): GETs only."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio

from asched.testing.fakes import FakeClient


class PodReads(FakeClient):
    """Answers each GET with `answer(path)`: a raw pod, or an exception to raise. The paths
    asked are kept in `paths`."""

    def __init__(self, answer: Callable[[str], dict[str, Any] | Exception]) -> None:
        super().__init__()
        self.answer = answer
        self.paths: list[str] = []

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        assert method == "GET"
        await anyio.lowlevel.checkpoint()
        self.paths.append(path)
        answer = self.answer(path)
        if isinstance(answer, Exception):
            raise answer
        return answer
