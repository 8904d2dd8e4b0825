"""buildExtenders' side effect: ignoredByScheduler resources become Fit's ignoredResources."""

from __future__ import annotations

import pytest

from asched.app import scheduler_options, with_ignored_resources
from asched.config import ExtenderConfig, ManagedResource, load_config
from asched.extender import ExtenderSetupError
from asched.plugins.noderesources.args import FitArgs
from asched.plugins.registry import in_tree_registry

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: a
    pluginConfig:
      - name: NodeResourcesFit
        args:
          ignoredResources: [example.com/other]
  - schedulerName: b
extenders:
  - urlPrefix: http://ext
    filterVerb: filter
    managedResources:
      - name: example.com/gpu
        ignoredByScheduler: true
      - name: example.com/fpga
"""


def test_ignored_resources_replace_fits_in_every_profile() -> None:
    cfg = load_config(CONFIG, in_tree_registry())
    profiles = with_ignored_resources(scheduler_options(cfg).profiles, cfg.extenders)
    for p in profiles:
        args = p.plugin_args["NodeResourcesFit"]
        assert isinstance(args, FitArgs)
        assert args.ignored_resources == ("example.com/gpu",)


def test_nothing_ignored_leaves_profiles_alone() -> None:
    cfg = load_config(CONFIG.replace("ignoredByScheduler: true", ""), in_tree_registry())
    before = scheduler_options(cfg).profiles
    after = with_ignored_resources(before, cfg.extenders)
    assert [p.plugin_args for p in after] == [p.plugin_args for p in before]


def test_a_profile_without_fit_args_cannot_build_extenders() -> None:
    cfg = load_config(CONFIG, in_tree_registry())
    [first, *_] = scheduler_options(cfg).profiles
    first.plugin_args = {}
    ignored = ExtenderConfig(
        url_prefix="http://ext", managed_resources=(ManagedResource("example.com/gpu", True),)
    )
    with pytest.raises(ExtenderSetupError, match="can't find NodeResourcesFitArgs"):
        with_ignored_resources([first], [ignored])
