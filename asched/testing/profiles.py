"""kube-scheduler's default profile as asched builds it, for tests and benchmarks that run
the real plugins without a configuration file."""

from __future__ import annotations

from asched.config import default_config
from asched.framework.registry import Registry
from asched.framework.runtime import ProfileSpec
from asched.plugins.podtopologyspread.args import LIST_DEFAULTING
from asched.plugins.podtopologyspread.args import Args as SpreadArgs
from asched.plugins.registry import in_tree_registry


def default_profile(*, batchable: bool = False) -> tuple[ProfileSpec, Registry]:
    """The default profile and the in-tree registry. `batchable` sets PodTopologySpread's
    `defaultingType: List` with no constraints: the system defaults make every pod
    unsignable, so only then does opportunistic batching act (in kube-scheduler too)."""
    registry = in_tree_registry()
    p = default_config(registry).profiles[0]
    args = dict(p.plugin_args)
    if batchable:
        args["PodTopologySpread"] = SpreadArgs(defaulting_type=LIST_DEFAULTING)
    spec = ProfileSpec(
        p.scheduler_name,
        {point: [(r.name, r.weight) for r in refs] for point, refs in p.plugins.items()},
        args,
    )
    return spec, registry
