"""Decode and validate the `extenders` list of a KubeSchedulerConfiguration.

Decoding is config/v1's Extender, strict like the rest of the file; the checks and their
messages are validateExtenders' (apis/config/validation): a prioritizer needs a positive
weight, managed resources must be valid extended resource names used by one extender
entry only once overall, and at most one extender may bind. An unset or zero httpTimeout
becomes kube-scheduler's DefaultExtenderTimeout (NewHTTPExtender does that in Go).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from asched.api.names import go_quote, is_extended_resource_name, qualified_name_errors
from asched.config.errors import Problems, child, index
from asched.config.fields import Fields
from asched.config.model import (
    DEFAULT_EXTENDER_TIMEOUT,
    ExtenderConfig,
    ExtenderTLS,
    ManagedResource,
)


def decode_extenders(raw: list[Any], path: str, problems: Problems) -> tuple[ExtenderConfig, ...]:
    """The entries as written (defaulted), every problem recorded in *problems*."""
    out: list[ExtenderConfig] = []
    for i, item in enumerate(raw):
        fields = Fields.of(item, index(path, i), problems)
        if fields is not None:
            out.append(_extender(fields, problems))
    _validate(out, path, problems)
    return tuple(out)


def _extender(fields: Fields, problems: Problems) -> ExtenderConfig:
    timeout = fields.duration("httpTimeout", 0.0)
    managed_path = fields.at("managedResources")
    managed = tuple(
        r
        for j, item in enumerate(fields.array("managedResources"))
        if (r := _managed(item, index(managed_path, j), problems)) is not None
    )
    tls_fields = fields.mapping("tlsConfig")
    config = ExtenderConfig(
        url_prefix=fields.text("urlPrefix"),
        filter_verb=fields.text("filterVerb"),
        preempt_verb=fields.text("preemptVerb"),
        prioritize_verb=fields.text("prioritizeVerb"),
        weight=fields.integer("weight", 0, bits=64),
        bind_verb=fields.text("bindVerb"),
        enable_https=fields.flag("enableHTTPS", False),
        tls=None if tls_fields is None else _tls(tls_fields),
        http_timeout=timeout or DEFAULT_EXTENDER_TIMEOUT,
        node_cache_capable=fields.flag("nodeCacheCapable", False),
        managed_resources=managed,
        ignorable=fields.flag("ignorable", False),
    )
    fields.finish()
    return config


def _managed(raw: Any, path: str, problems: Problems) -> ManagedResource | None:
    fields = Fields.of(raw, path, problems)
    if fields is None:
        return None
    resource = ManagedResource(fields.text("name"), fields.flag("ignoredByScheduler", False))
    fields.finish()
    return resource


def _tls(fields: Fields) -> ExtenderTLS:
    tls = ExtenderTLS(
        insecure=fields.flag("insecure", False),
        server_name=fields.text("serverName"),
        cert_file=fields.text("certFile"),
        key_file=fields.text("keyFile"),
        ca_file=fields.text("caFile"),
        cert_data=_pem_bytes(fields, "certData"),
        key_data=_pem_bytes(fields, "keyData"),
        ca_data=_pem_bytes(fields, "caData"),
    )
    fields.finish()
    return tls


def _pem_bytes(fields: Fields, key: str) -> bytes:
    """A Go []byte field: base64 (standard alphabet, padded) in JSON and YAML."""
    text = fields.text(key)
    if not text:
        return b""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        fields.error(key, f"illegal base64 data: {exc}")
        return b""


def _validate(extenders: list[ExtenderConfig], path: str, problems: Problems) -> None:
    """validateExtenders, message for message."""
    binders = 0
    seen: set[str] = set()
    for i, ext in enumerate(extenders):
        at = index(path, i)
        if ext.prioritize_verb and ext.weight <= 0:
            problems.error(
                child(at, "weight"),
                f"Invalid value: {ext.weight}: must have a positive weight applied to it",
            )
        if ext.bind_verb:
            binders += 1
        for j, resource in enumerate(ext.managed_resources):
            name_path = child(index(child(at, "managedResources"), j), "name")
            quoted = go_quote(resource.name)
            errors = qualified_name_errors(resource.name)
            for msg in errors:
                problems.error(name_path, f"Invalid value: {quoted}: {msg}")
            if not errors and not is_extended_resource_name(resource.name):
                problems.error(
                    name_path, f"Invalid value: {quoted}: is an invalid extended resource name"
                )
            if resource.name in seen:
                problems.error(
                    name_path, f"Invalid value: {quoted}: duplicate extender managed resource name"
                )
            seen.add(resource.name)
    if binders > 1:
        problems.error(
            path,
            f'Invalid value: "found {binders} extenders implementing bind": '
            "only one extender can implement bind",
        )
