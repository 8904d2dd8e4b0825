"""The `extenders` list: decoding, defaults, and validateExtenders' messages."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from asched.config import ExtenderConfig, ExtenderTLS, ManagedResource
from tests.unit.config.support import config_doc, load_doc, problems_of

REGEX_NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
    "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def test_defaults_and_every_field_decoded() -> None:
    pem = b"-----BEGIN CERTIFICATE-----\n"
    cfg = load_doc(
        config_doc(
            extenders=[
                {"urlPrefix": "http://a:8888/sched", "filterVerb": "filter"},
                {
                    "urlPrefix": "https://b/",
                    "filterVerb": "f",
                    "preemptVerb": "p",
                    "prioritizeVerb": "s",
                    "weight": 3,
                    "bindVerb": "b",
                    "enableHTTPS": True,
                    "tlsConfig": {
                        "insecure": False,
                        "serverName": "ext.example.com",
                        "caFile": "/ca.pem",
                        "certData": base64.b64encode(pem).decode(),
                    },
                    "httpTimeout": "1500ms",
                    "nodeCacheCapable": True,
                    "managedResources": [
                        {"name": "example.com/gpu", "ignoredByScheduler": True},
                        {"name": "example.com/fpga"},
                    ],
                    "ignorable": True,
                },
            ]
        )
    )
    assert cfg.extenders == (
        ExtenderConfig(url_prefix="http://a:8888/sched", filter_verb="filter", http_timeout=5.0),
        ExtenderConfig(
            url_prefix="https://b/",
            filter_verb="f",
            preempt_verb="p",
            prioritize_verb="s",
            weight=3,
            bind_verb="b",
            enable_https=True,
            tls=ExtenderTLS(server_name="ext.example.com", ca_file="/ca.pem", cert_data=pem),
            http_timeout=1.5,
            node_cache_capable=True,
            managed_resources=(
                ManagedResource("example.com/gpu", ignored_by_scheduler=True),
                ManagedResource("example.com/fpga"),
            ),
            ignorable=True,
        ),
    )


def test_zero_timeout_is_kube_schedulers_default() -> None:
    cfg = load_doc(config_doc(extenders=[{"urlPrefix": "http://a", "httpTimeout": "0s"}]))
    assert cfg.extenders[0].http_timeout == 5.0


@pytest.mark.parametrize(
    ("extenders", "expected"),
    [
        pytest.param(
            [{"urlPrefix": "http://a", "prioritizeVerb": "prioritize"}],
            [
                (
                    "extenders[0].weight",
                    "Invalid value: 0: must have a positive weight applied to it",
                )
            ],
            id="prioritizer-without-weight",
        ),
        pytest.param(
            [{"urlPrefix": "http://a", "prioritizeVerb": "p", "weight": -2}],
            [
                (
                    "extenders[0].weight",
                    "Invalid value: -2: must have a positive weight applied to it",
                )
            ],
            id="negative-weight",
        ),
        pytest.param(
            [{"urlPrefix": "http://a", "weight": 0}],
            [],
            id="weight-unchecked-without-prioritize",
        ),
        pytest.param(
            [
                {"urlPrefix": "http://a", "bindVerb": "bind"},
                {"urlPrefix": "http://b", "bindVerb": "bind"},
            ],
            [
                (
                    "extenders",
                    'Invalid value: "found 2 extenders implementing bind": '
                    "only one extender can implement bind",
                )
            ],
            id="two-binders",
        ),
        pytest.param(
            [
                {"urlPrefix": "http://a", "managedResources": [{"name": "example.com/gpu"}]},
                {"urlPrefix": "http://b", "managedResources": [{"name": "example.com/gpu"}]},
            ],
            [
                (
                    "extenders[1].managedResources[0].name",
                    'Invalid value: "example.com/gpu": duplicate extender managed resource name',
                )
            ],
            id="duplicate-managed-resource",
        ),
        pytest.param(
            [{"urlPrefix": "http://a", "managedResources": [{"name": "cpu"}]}],
            [
                (
                    "extenders[0].managedResources[0].name",
                    'Invalid value: "cpu": is an invalid extended resource name',
                )
            ],
            id="native-resource",
        ),
        pytest.param(
            [{"urlPrefix": "http://a", "managedResources": [{"name": "example.com/-gpu"}]}],
            [
                (
                    "extenders[0].managedResources[0].name",
                    f'Invalid value: "example.com/-gpu": {REGEX_NAME_PART}',
                )
            ],
            id="not-a-qualified-name",
        ),
        pytest.param(
            [{"urlPrefix": "http://a", "managedResources": [{"name": "/gpu"}]}],
            [
                (
                    "extenders[0].managedResources[0].name",
                    'Invalid value: "/gpu": prefix part must be non-empty',
                )
            ],
            id="empty-prefix",
        ),
        pytest.param(
            [{"urlPrefix": "http://a", "filtrVerb": "filter"}],
            [("extenders[0].filtrVerb", "unknown field")],
            id="strict-decoding",
        ),
        pytest.param(
            [{"urlPrefix": "http://a", "httpTimeout": 5}],
            [
                (
                    "extenders[0].httpTimeout",
                    'must be a duration string such as "15s", got number',
                )
            ],
            id="timeout-not-a-duration",
        ),
        pytest.param(
            [{"urlPrefix": "https://a", "tlsConfig": {"caData": "not base64!"}}],
            [
                (
                    "extenders[0].tlsConfig.caData",
                    "illegal base64 data: Only base64 data is allowed",
                )
            ],
            id="pem-data-not-base64",
        ),
    ],
)
def test_validate_extenders(
    extenders: list[dict[str, Any]], expected: list[tuple[str, str]]
) -> None:
    doc = config_doc(extenders=extenders)
    if not expected:
        load_doc(doc)
        return
    assert problems_of(doc) == expected
