"""Builders for config documents in tests: write the dict, get the YAML text loaded."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from asched.config import ConfigError, SchedulerConfig, load_config
from asched.framework.registry import Registry
from tests.unit.config.fake_registry import fake_registry

V1 = "kubescheduler.config.k8s.io/v1"


def config_doc(*profiles: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A v1 KubeSchedulerConfiguration with the given profiles and top-level fields."""
    doc: dict[str, Any] = {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", **top}
    if profiles:
        doc["profiles"] = list(profiles)
    return doc


def profile_doc(name: str = "default-scheduler", **fields: Any) -> dict[str, Any]:
    return {"schedulerName": name, **fields}


def load_doc(doc: dict[str, Any], registry: Registry | None = None) -> SchedulerConfig:
    text = yaml.safe_dump(doc, sort_keys=False)
    return load_config(text, registry if registry is not None else fake_registry())


def problems_of(doc: dict[str, Any], registry: Registry | None = None) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        load_doc(doc, registry)
    return info.value.problems


def paths_of(doc: dict[str, Any]) -> list[str]:
    return [path for path, _ in problems_of(doc)]
