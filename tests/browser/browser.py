"""A real headless Chromium (Debian's chromium and chromium-driver) driven by Selenium.

Selenium's calls block, so each one runs in a worker thread: the test's event loop keeps
serving the admin client meanwhile. The bearer token is added to every request the page
makes (the document, its script, fetch and EventSource alike) through the DevTools
protocol, which is how a browser in front of an authenticating proxy would send it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import pytest

T = TypeVar("T")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def require_chromium() -> None:
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip(
            "chromium and chromedriver are not installed "
            "(hack/env.sh installs Debian's chromium and chromium-driver when run as root)"
        )


class Browser:
    def __init__(self, token: str | None = None) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        assert CHROMIUM is not None
        assert CHROMEDRIVER is not None
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in (
            "--headless=new",
            "--no-sandbox",  # tests run as root in containers
            "--disable-dev-shm-usage",
            "--ignore-certificate-errors",  # asched's self-signed serving certificate
            "--window-size=1400,1800",
        ):
            options.add_argument(arg)
        self.driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
        if token is not None:
            self.driver.execute_cdp_cmd("Network.enable", {})
            self.driver.execute_cdp_cmd(
                "Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Bearer {token}"}}
            )

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(partial(fn, *args))

    async def get(self, url: str) -> None:
        await self.call(self.driver.get, url)

    async def js(self, script: str, *args: Any) -> Any:
        return await self.call(self.driver.execute_script, script, *args)

    async def screenshot(self, path: Path) -> None:
        await self.call(self.driver.save_screenshot, str(path))

    async def until(self, script: str, *args: Any, within: float = 30.0, every: float = 0.2) -> Any:
        """Poll *script* until it returns something truthy; return that."""
        last: Any = None
        with anyio.move_on_after(within):
            while True:
                last = await self.js(script, *args)
                if last:
                    return last
                await anyio.sleep(every)
        raise AssertionError(f"not true within {within}s: {script} (last: {last!r})")

    async def open_live(self, url: str) -> None:
        """Open the inspector at *url* and wait until its event stream is connected."""
        await self.get(url)
        await self.until(
            "const s = document.getElementById('status'); return s && s.textContent === 'live'"
        )

    def quit(self) -> None:
        self.driver.quit()
