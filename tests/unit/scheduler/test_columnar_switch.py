"""`asched run --no-columnar` reaches every profile's runtime."""

from __future__ import annotations

import pytest

from asched.app import scheduler_options
from asched.cli import build_parser
from asched.config import default_config
from asched.plugins.registry import in_tree_registry
from asched.scheduler.scheduler import Scheduler
from asched.testing import FakeClient


@pytest.mark.parametrize(("argv", "columnar"), [([], True), (["--no-columnar"], False)])
def test_the_flag_sets_every_framework(argv: list[str], columnar: bool) -> None:
    args = build_parser().parse_args(["run", *argv])
    assert args.columnar is columnar
    registry = in_tree_registry()
    options = scheduler_options(default_config(registry))
    options.columnar = args.columnar
    sched = Scheduler(FakeClient(), registry, options)
    assert [f.columnar for f in sched.frameworks.values()] == [columnar]
