from __future__ import annotations

import pytest

from asched.config import ConfigError, load_config
from tests.unit.config.fake_registry import fake_registry

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            HEAD + "profiles:\n  - schedulerName: a\n   plugins: {}\n",
            "YAML syntax error at line 5, column 4",
            id="bad-indentation",
        ),
        pytest.param(
            HEAD + "parallelism: [1\n",
            "YAML syntax error at line 4, column 1",
            id="unclosed-flow-sequence",
        ),
        pytest.param(
            HEAD + "parallelism: 1\nparallelism: 2\n",
            "YAML syntax error at line 4, column 1: duplicate key 'parallelism'",
            id="duplicate-key",
        ),
        pytest.param(
            HEAD + "---\n" + HEAD, "expected one YAML document, found 2", id="two-documents"
        ),
        pytest.param("", "the config is empty", id="empty"),
        pytest.param("- 1\n", "must be an object, got array", id="not-a-mapping"),
    ],
)
def test_unreadable_yaml(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(text, fake_registry(), filename="sched.yaml")
    assert message in str(info.value)
    assert info.value.filename == "sched.yaml"
