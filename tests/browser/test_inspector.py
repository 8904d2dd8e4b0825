"""The live inspector in a real headless Chromium, against asched serving HTTPS with
delegated authentication, on the real API server with kwok nodes.

asched runs as a process (tests/integration/asched_proc.py) with the Coscheduling example
configuration, so one profile schedules plain pods and gangs. What the page shows is read
from its DOM and compared with the API server (where pods landed) and with
`asched explain`'s model for the same state.

ASCHED_INSPECTOR_SCREENSHOTS=<dir> saves screenshots of the page at the end of the
scenario (docs/img holds the ones the README shows).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import yaml

from asched.app import build_registry
from asched.client.kubeconfig import load_connection
from asched.client.rest import RestClient as KubeRestClient
from asched.config import load_config
from asched.explain.model import Explanation
from asched.explain.runner import explain_pod
from asched.localcluster import ClusterClient, LocalCluster, NodeSpec
from tests.browser.browser import Browser, require_chromium
from tests.builders import make_pod
from tests.cluster_fixtures import NodeFactory, unique
from tests.integration.asched_proc import AschedProcess, running_asched
from tests.integration.gang_helpers import ISOLATION_LABEL, create_gang, gang_config
from tests.integration.helpers import poll
from tests.integration.test_native_gang import _group, _members

ZONE = "topology.kubernetes.io/zone"
BURST = 12


@asynccontextmanager
async def _browser(token: str | None) -> AsyncIterator[Browser]:
    require_chromium()
    browser = await anyio.to_thread.run_sync(Browser, token)
    try:
        yield browser
    finally:
        await anyio.to_thread.run_sync(browser.quit)


async def _explain(cluster: LocalCluster, config: Path, namespace: str, pod: str) -> Explanation:
    registry = build_registry()
    cfg = load_config(config, registry, filename=str(config))
    connection = await load_connection(str(cluster.admin_kubeconfig))
    async with KubeRestClient(connection) as client:
        return await explain_pod(client, namespace, pod, cfg, registry)


async def test_the_inspector_is_refused_without_a_token_and_live_with_one(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    require_chromium()
    async with running_asched(
        None, cluster.scheduler_kubeconfig, tmp_path / "asched.log", secure=True
    ) as proc:
        url = f"{proc.url}/inspector/"
        async with _browser(None) as anonymous:
            await anonymous.get(url)
            body = await anonymous.js("return document.body.innerText")
            assert '"code":401' in body.replace(" ", "")
            assert await anonymous.js("return document.getElementById('status')") is None
        async with _browser("not-a-token") as forged:
            await forged.get(url)
            assert "Unauthorized" in await forged.js("return document.body.innerText")
        async with _browser(cluster.admin.token) as admin_browser:
            await admin_browser.open_live(url)
            assert await admin_browser.js("return document.title") == "asched inspector"


async def _decisions(browser: Browser, namespace: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = await browser.js(
        """
        return [...document.querySelectorAll('#decisions details')]
          .filter((d) => d.dataset.pod.startsWith(arguments[0] + '/'))
          .map((d) => ({
            pod: d.dataset.pod,
            node: d.dataset.node,
            scores: [...d.querySelectorAll('td.score')].map((c) =>
              [c.dataset.node, c.dataset.plugin, c.textContent]),
            totals: [...d.querySelectorAll('td[data-total]')].map((c) =>
              [c.parentElement.dataset.node, Number(c.dataset.total)]),
          }));
        """,
        namespace,
    )
    return rows


async def test_decisions_rejections_gangs_and_queues_show_what_asched_did(
    cluster: LocalCluster,
    admin: ClusterClient,
    namespace: str,
    kwok_nodes: NodeFactory,
    tmp_path: Path,
) -> None:
    require_chromium()
    isolation = unique("insp")
    scheduler = unique("inspector")
    # A second profile whose pods are signable (no PodTopologySpread default
    # constraints), so opportunistic batching places alike pods by hint. Every profile
    # sorts the one queue alike; QueueSort plays no part in signing.
    cfg = yaml.safe_load(gang_config(scheduler, permit_wait_seconds=30))
    batching = f"{scheduler}-batch"
    cfg["profiles"].append(
        {
            "schedulerName": batching,
            "plugins": {
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}
            },
            "pluginConfig": [
                *cfg["profiles"][0]["pluginConfig"],
                {"name": "PodTopologySpread", "args": {"defaultingType": "List"}},
            ],
        }
    )
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    specs = [
        NodeSpec(name, cpu=cpu, labels={ISOLATION_LABEL: isolation, ZONE: zone})
        for name, cpu, zone in (
            ("a0", "4", "a"),
            ("a1", "4", "a"),
            ("b0", "8", "b"),
            ("b1", "16", "b"),
        )
    ]
    nodes = await kwok_nodes(specs)
    pods_path = f"/api/v1/namespaces/{namespace}/pods"

    def pod(name: str, cpu: str) -> dict[str, Any]:
        return (
            make_pod(name, namespace)
            .scheduler(scheduler)
            .cpu(cpu)
            .memory("256Mi")
            .node_selector({ISOLATION_LABEL: isolation})
            .manifest()
        )

    async with (
        running_asched(
            config, cluster.scheduler_kubeconfig, tmp_path / "asched.log", secure=True
        ) as proc,
        _browser(cluster.admin.token) as browser,
    ):
        await browser.open_live(f"{proc.url}/inspector/")
        chart_js = (
            "const c = document.getElementById('queue-chart');"
            "return [c.dataset.points, c.dataset.max, c.dataset.last]"
        )
        points_before = int((await browser.js(chart_js))[0])

        # A burst of pods: each decision shows the pod's node, as the API server has it.
        names = [f"burst-{i:02d}" for i in range(BURST)]
        for name in names:
            await admin.post(pods_path, pod(name, "500m"))

        async def all_bound() -> dict[str, str] | None:
            items = await admin.list(pods_path)
            placed = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in items}
            return placed if all(placed.get(n) for n in names) else None

        with anyio.fail_after(60):
            placed = await poll(all_bound, interval=0.2)

        async def shown() -> list[dict[str, Any]] | None:
            rows = await _decisions(browser, namespace)
            return rows if len(rows) >= BURST else None

        with anyio.fail_after(30):
            decisions = await poll(shown, interval=0.3)
        assert {d["pod"]: d["node"] for d in decisions} == {
            f"{namespace}/{n}": placed[n] for n in names
        }
        for d in decisions:
            plugins = {plugin for _, plugin, _ in d["scores"]}
            assert {"NodeResourcesFit", "NodeResourcesBalancedAllocation"} <= plugins
            assert d["totals"][0][0] == d["node"]  # the chosen node leads its table

        # The newest decision saw every earlier pod of the burst placed: the state that
        # `asched explain` sees now, so its scores must be the page's, plugin by plugin.
        newest = decisions[0]
        ns, _, pod_name = newest["pod"].partition("/")
        explained = await _explain(cluster, config, ns, pod_name)
        expected = {
            (s.node, plugin): f"{v.raw} / {v.normalized} / {v.weighted}"
            for s in explained.scores
            for plugin, v in s.plugins.items()
        }
        shown_scores = {(node, plugin): text for node, plugin, text in newest["scores"]}
        assert shown_scores, newest
        assert shown_scores == {k: expected[k] for k in shown_scores}
        totals = {s.node: s.total for s in explained.scores}
        assert dict(newest["totals"]) == {n: totals[n] for n, _ in newest["totals"]}
        assert explained.selected in ("", newest["node"])

        # A pod that fits nowhere: its rejection per plugin, then explain's table on a click.
        await admin.post(pods_path, pod("huge", "100"))
        row = f"#pending tr[data-pod='{namespace}/huge']"
        rejection = await browser.until(
            "const r = document.querySelector(arguments[0] + ' td.rejection');"
            "return r && r.textContent",
            row,
        )
        assert "NodeResourcesFit: 4" in rejection
        await browser.js("document.querySelector(arguments[0]).click()", row)
        verdicts = await browser.until(
            "const rows = [...document.querySelectorAll('#explain-nodes tbody tr')];"
            "return rows.length && Object.fromEntries(rows.map((r) => "
            "[r.dataset.node, r.querySelector('[data-field=plugin]').textContent]))"
        )
        assert {n: verdicts[n] for n in nodes} == dict.fromkeys(nodes, "NodeResourcesFit")
        fit_error = await browser.js(
            "return document.getElementById('explain-fit-error').textContent"
        )
        assert "4 Insufficient cpu" in fit_error

        # A gang of three with two members: created, not placed; the third completes it.
        gang = await create_gang(
            admin,
            namespace,
            "trio",
            2,
            scheduler=scheduler,
            isolation=isolation,
            cpu="100m",
            min_member=3,
        )
        gang_row = f"#gangs tr[data-gang='{namespace}/trio']"
        cells = (
            "const r = document.querySelector(arguments[0]);"
            "return r && Object.fromEntries([...r.querySelectorAll('[data-field]')]"
            ".map((c) => [c.dataset.field, c.textContent]))"
        )
        progress = await browser.until(
            cells.replace("return r &&", "const v = r &&") + ";return v && v.created === '2' && v",
            gang_row,
        )
        assert (progress["assumed"], progress["bound"]) == ("0", "0")
        third = make_pod("trio-2", namespace).scheduler(scheduler).pod_group("trio").cpu("100m")
        await admin.post(pods_path, third.node_selector({ISOLATION_LABEL: isolation}).manifest())
        done = await browser.until(
            cells.replace("return r &&", "const v = r &&") + ";return v && v.bound === '3' && v",
            gang_row,
            within=60,
        )
        assert done["created"] == "3"
        assert gang.min_member == 3

        # A native PodGroup: placed by the group cycle, which the decisions say.
        await _group(admin, namespace, "duo", 2)
        await _members(admin, namespace, "duo", 2, scheduler=scheduler, iso=isolation, cpu="100m")
        duo = await browser.until(
            cells.replace("return r &&", "const v = r &&") + ";return v && v.bound === '2' && v",
            f"#gangs tr[data-gang='{namespace}/duo']",
            within=60,
        )
        assert duo["created"] == "2"
        summary = await browser.until(
            "const d = document.querySelector(`#decisions details[data-pod='${arguments[0]}']`);"
            "return d && d.querySelector('summary').textContent",
            f"{namespace}/duo-0",
        )
        assert f"placed with its PodGroup {namespace}/duo by the group cycle" in summary

        # Alike pods of the batching profile: after the first, hints place them, and their
        # decisions say so instead of showing a ranking.
        alike = [f"alike-{i}" for i in range(5)]
        for name in alike:
            body = pod(name, "100m")
            body["spec"]["schedulerName"] = batching
            await admin.post(pods_path, body)
        summaries_js = (
            "return arguments[0].map((p) => { const d = document.querySelector("
            "`#decisions details[data-pod='${p}']`);"
            "return d ? d.querySelector('summary').textContent : null; })"
        )
        keys = [f"{namespace}/{n}" for n in alike]
        summaries = await browser.until(
            summaries_js.replace("return arguments[0].map", "const s = arguments[0].map")
            + ";return s.every((x) => x) && s",
            keys,
            within=60,
        )
        hinted = [t for t in summaries if "opportunistic batching" in t]
        assert hinted, summaries
        assert "opportunistic batching" not in summaries[0]  # the first pod was ranked

        # The queue chart moved: more samples, and the stuck pod is in the unschedulable line.
        chart = await browser.js(chart_js)
        assert int(chart[0]) > points_before
        assert int(chart[1]) >= 1
        assert int(chart[2].split(",")[2]) >= 1  # unschedulable

        shots = os.environ.get("ASCHED_INSPECTOR_SCREENSHOTS")
        if shots:
            await _screenshots(browser, Path(shots))
    assert isinstance(proc, AschedProcess)


async def _screenshots(browser: Browser, out: Path) -> None:
    await anyio.Path(out).mkdir(parents=True, exist_ok=True)
    await browser.js("document.querySelector('#decisions details').open = true")
    await anyio.sleep(1.5)  # a tick, so the opened decision and chart are current
    await browser.js("window.scrollTo(0, 0)")
    await browser.screenshot(out / "inspector.png")
    await browser.js("document.getElementById('pending-section').scrollIntoView()")
    await browser.screenshot(out / "inspector-explain.png")
