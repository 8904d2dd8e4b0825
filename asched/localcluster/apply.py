"""Apply YAML manifests (create, or replace if present) through the REST client.

The harness installs asched's own manifests (the PodGroup CRD, the RBAC) exactly as a user
would with ``kubectl apply``, so the files under manifests/ are exercised by every test run.
Resource paths come from API discovery, so any kind the server knows can be applied.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import anyio
import yaml

from asched.localcluster.rest import ApiError, ClusterClient, JsonObject


@dataclass(frozen=True, slots=True)
class _Resource:
    plural: str
    namespaced: bool


def load_manifests(text: str) -> list[JsonObject]:
    """Parse a multi-document YAML string, dropping empty documents."""
    return [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict) and doc]


def _group_version_prefix(api_version: str) -> str:
    return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"


class Applier:
    """Creates or replaces objects; caches discovery per API group version."""

    def __init__(self, client: ClusterClient) -> None:
        self._client = client
        self._discovery: dict[str, dict[str, _Resource]] = {}

    async def _resource(self, api_version: str, kind: str) -> _Resource:
        kinds = self._discovery.get(api_version)
        if kinds is None or kind not in kinds:
            doc = await self._client.get(_group_version_prefix(api_version))
            kinds = {
                r["kind"]: _Resource(r["name"], bool(r["namespaced"]))
                for r in doc.get("resources", [])
                if "/" not in r["name"]
            }
            self._discovery[api_version] = kinds
        if kind not in kinds:
            raise LookupError(f"server does not serve kind {kind} in {api_version}")
        return kinds[kind]

    async def collection_path(self, obj: JsonObject, namespace: str | None = None) -> str:
        res = await self._resource(obj["apiVersion"], obj["kind"])
        prefix = _group_version_prefix(obj["apiVersion"])
        if res.namespaced:
            ns = obj["metadata"].get("namespace") or namespace or "default"
            return f"{prefix}/namespaces/{ns}/{res.plural}"
        return f"{prefix}/{res.plural}"

    async def apply(self, obj: JsonObject, namespace: str | None = None) -> JsonObject:
        """Create *obj*; if it exists, replace it (keeping nothing of the old spec)."""
        path = await self.collection_path(obj, namespace)
        try:
            return await self._client.post(path, obj)
        except ApiError as err:
            if err.status != 409:
                raise
        item_path = f"{path}/{obj['metadata']['name']}"
        current = await self._client.get(item_path)
        body: dict[str, Any] = {**obj, "metadata": {**obj["metadata"]}}
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        return await self._client.put(item_path, body)

    async def apply_all(
        self, objs: Iterable[JsonObject], namespace: str | None = None
    ) -> builtins.list[JsonObject]:
        """Apply in order (a Namespace before what lives in it)."""
        return [await self.apply(obj, namespace) for obj in objs]


async def wait_crd_established(client: ClusterClient, name: str) -> None:
    """Wait until the CRD's Established condition is True (its API is then served).

    Waits for ever; callers bound it with ``anyio.fail_after``.
    """
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
    while True:
        crd = await client.get(path)
        conditions = crd.get("status", {}).get("conditions") or []
        if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
            return
        await anyio.sleep(0.05)
