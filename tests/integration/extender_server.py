"""A scheduler extender for tests: a small aiohttp server speaking extender/v1.

Run as `python -m tests.integration.extender_server RULES_JSON PORT LOG [KUBECONFIG]`. The
rules file says how it answers (re-read on every request, so a test can change them):
- "reject": {node name suffix: reason}  filter: nodes whose name ends so fail with it;
  "unresolvable": the same, as failedAndUnresolvableNodes;
- "reject_pods": {pod name: reason}     filter: every node fails that pod with the reason;
- "scores": {node name suffix: 0..10}   prioritize: the score of matching nodes (else 0);
- "bind": true                          bind: POST the Binding with KUBECONFIG's identity;
- "preempt_keep": [node name suffix]    preempt: keep only those candidates (else all);
- "status": HTTP status to answer everything with instead (an extender that fails).
Every request is appended to LOG as one JSON line {"verb", "namespace", "pod", "names",
"nodes", "containers"} so a test can assert what the extender was asked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from aiohttp import web

from asched.client.rest import RestClient


def _suffix_value(rules: dict[str, Any], node: str) -> Any:
    for suffix, value in rules.items():
        if node.endswith(suffix):
            return value
    return None


class Extender:
    def __init__(self, rules: Path, log: Path, kubeconfig: str | None) -> None:
        self.rules_path = rules
        self.log = log
        self.kubeconfig = kubeconfig

    def rules(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.rules_path.read_text())
        return loaded

    def record(self, verb: str, args: dict[str, Any]) -> None:
        pod = args.get("Pod") or {}
        meta = pod.get("metadata") or {}
        nodes = args.get("Nodes")
        victims = args.get("NodeNameToMetaVictims") or args.get("NodeNameToVictims")
        entry = {
            "verb": verb,
            "namespace": meta.get("namespace") or args.get("PodNamespace"),
            "pod": meta.get("name") or args.get("PodName"),
            "names": sorted(victims) if victims is not None else args.get("NodeNames"),
            "nodes": None if nodes is None else [n["metadata"]["name"] for n in nodes["items"]],
            "containers": [c.get("name") for c in (pod.get("spec") or {}).get("containers", [])],
        }
        with self.log.open("a") as f:
            f.write(json.dumps(entry) + "\n")

    async def handle(self, request: web.Request) -> web.Response:
        verb = request.match_info["verb"]
        args = await request.json()
        self.record(verb, args)
        rules = self.rules()
        if "status" in rules:
            return web.Response(status=int(rules["status"]))
        answer = await getattr(self, verb)(args, rules)
        return web.json_response(answer)

    @staticmethod
    def _names(args: dict[str, Any]) -> list[str]:
        if args.get("NodeNames") is not None:
            return list(args["NodeNames"])
        return [n["metadata"]["name"] for n in args["Nodes"]["items"]]

    async def filter(self, args: dict[str, Any], rules: dict[str, Any]) -> dict[str, Any]:
        names = self._names(args)
        pod = ((args.get("Pod") or {}).get("metadata") or {}).get("name", "")
        pod_reason = rules.get("reject_pods", {}).get(pod)
        failed, unresolvable, kept = {}, {}, []
        for name in names:
            reason = pod_reason or _suffix_value(rules.get("reject", {}), name)
            hard = _suffix_value(rules.get("unresolvable", {}), name)
            if hard is not None:
                unresolvable[name] = hard
            elif reason is not None:
                failed[name] = reason
            else:
                kept.append(name)
        out: dict[str, Any] = {"FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable}
        if args.get("NodeNames") is not None:
            out["NodeNames"] = kept
        else:
            out["Nodes"] = {
                "items": [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in kept]
            }
        return out

    async def prioritize(self, args: dict[str, Any], rules: dict[str, Any]) -> list[Any]:
        scores = rules.get("scores", {})
        return [
            {"Host": name, "Score": _suffix_value(scores, name) or 0} for name in self._names(args)
        ]

    async def bind(self, args: dict[str, Any], rules: dict[str, Any]) -> dict[str, Any]:
        if not rules.get("bind"):
            return {"Error": "this extender does not bind"}
        async with await RestClient.from_kubeconfig(self.kubeconfig) as client:
            await client.bind(args["PodNamespace"], args["PodName"], args["PodUID"], args["Node"])
        return {"Error": ""}

    async def preempt(self, args: dict[str, Any], rules: dict[str, Any]) -> dict[str, Any]:
        candidates = args.get("NodeNameToMetaVictims") or {}
        keep = rules.get("preempt_keep")
        if keep is not None:
            candidates = {
                node: v for node, v in candidates.items() if any(node.endswith(k) for k in keep)
            }
        return {"NodeNameToMetaVictims": candidates}


def main() -> None:
    rules, port, log = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    kubeconfig = sys.argv[4] if len(sys.argv) > 4 else None
    ext = Extender(rules, log, kubeconfig)
    app = web.Application()
    app.router.add_post("/ext/{verb}", ext.handle)
    app.router.add_get("/healthz", lambda r: web.Response(text="ok"))
    web.run_app(app, host="127.0.0.1", port=port, print=None)


if __name__ == "__main__":
    main()
