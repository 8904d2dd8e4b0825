"""Screenshots of the inspector on the demo cluster, for the README (docs/img).

    .venv/bin/python -m tests.browser.screenshots docs/img

Starts the demo's control plane and nodes, runs `asched run` with the demo's
Coscheduling configuration (plain HTTP on loopback), submits the demo workload (plain
pods, a scheduler-plugins gang, a native gang, a pod too big for any node) and a stream of
extra pods so the queues move, then photographs the page in headless Chromium.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

import anyio

from asched.demo.cli import DATA, GANG_CONFIG
from asched.demo.runner import submit
from asched.demo.topology import demo_nodes
from asched.demo.workload import GANG_SCHEDULER, GANG_SIZE, demo_workload
from asched.localcluster import LocalCluster
from tests.browser.browser import Browser
from tests.builders import make_pod
from tests.integration.asched_proc import running_asched

NODES = 24
EXTRA = 60


async def main(out: Path) -> None:
    await anyio.Path(out).mkdir(parents=True, exist_ok=True)
    config = out / "gang-config.yaml.tmp"
    await anyio.Path(config).write_text(resources.files(DATA).joinpath(GANG_CONFIG).read_text())
    async with LocalCluster() as cluster:
        names = await cluster.create_nodes(demo_nodes(NODES))
        await cluster.wait_nodes_ready(names)
        async with (
            running_asched(config, cluster.scheduler_kubeconfig, out / "asched.log.tmp") as proc,
            cluster.admin_client() as admin,
        ):
            browser = await anyio.to_thread.run_sync(Browser, None)
            try:
                await browser.get(f"{proc.url}/inspector/")
                await browser.until(
                    "return document.getElementById('status').textContent === 'live'"
                )
                await anyio.sleep(3)
                workload = demo_workload()
                ns = workload.namespace
                # The demo's scheduler-plugins gang, with its last member held back a few
                # seconds: the others wait, gated, and the queue chart shows them.
                held = [p for p in workload.pods if p.name == f"train-{GANG_SIZE}"]
                workload.pods[:] = [p for p in workload.pods if p not in held]
                await submit(admin, workload)
                await anyio.sleep(4)
                await browser.screenshot(out / "inspector-gang.png")  # two of three, gated
                for p in held:
                    await admin.post(f"/api/v1/namespaces/{ns}/pods", p.manifest)
                for i in range(EXTRA):
                    pod = make_pod(f"batch-{i:02d}", workload.namespace).scheduler(GANG_SCHEDULER)
                    await admin.post(
                        f"/api/v1/namespaces/{ns}/pods",
                        pod.cpu("200m").memory("256Mi").manifest(),
                    )
                    await anyio.sleep(0.15)
                await anyio.sleep(4)
                await browser.js("document.querySelector('#decisions details').open = true")
                await browser.js(
                    "document.querySelector(\"#pending tr[data-pod='demo/big-pod']\").click()"
                )
                await anyio.sleep(2)
                await browser.screenshot(out / "inspector.png")
            finally:
                await anyio.to_thread.run_sync(browser.quit)
    await anyio.Path(config).unlink()
    await anyio.Path(out / "asched.log.tmp").unlink(missing_ok=True)


if __name__ == "__main__":
    anyio.run(main, Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img"))
