"""asched-policies: the seed article's wished-for scheduling policies as asched plugins.

An ordinary Python package, outside asched's tree: its pyproject.toml lists each plugin's
PluginSpec under the `asched.plugins` entry-point group, so `pip install asched-policies`
is all a scheduler needs - no rebuild, unlike the Go scheduler framework. Enable the
plugins by name in a KubeSchedulerConfiguration.

    StrongestCPU    score   the most allocatable CPU (or args.resource) wins
    RegionFence     filter  only the regions the pod (or args.defaultRegions) allows
    GPUDriver       filter  GPU pods need a new enough driver label on the node
    CPUUtilization  score   prefer nodes a metrics agent reports as idle
    GPUResource     score   pack (or spread) GPU pods by free GPUs
    Location        score   same zone 100, same region 50, elsewhere 0
"""

from asched_policies.cpu_utilization import SPEC as CPU_UTILIZATION_SPEC
from asched_policies.gpu_driver import SPEC as GPU_DRIVER_SPEC
from asched_policies.gpu_resource import SPEC as GPU_RESOURCE_SPEC
from asched_policies.location import SPEC as LOCATION_SPEC
from asched_policies.region_fence import SPEC as REGION_FENCE_SPEC
from asched_policies.strongest_cpu import SPEC as STRONGEST_CPU_SPEC

# Every plugin of the package; the entry points in pyproject.toml name the same specs.
SPECS = (
    STRONGEST_CPU_SPEC,
    REGION_FENCE_SPEC,
    GPU_DRIVER_SPEC,
    CPU_UTILIZATION_SPEC,
    GPU_RESOURCE_SPEC,
    LOCATION_SPEC,
)

__all__ = [
    "CPU_UTILIZATION_SPEC",
    "GPU_DRIVER_SPEC",
    "GPU_RESOURCE_SPEC",
    "LOCATION_SPEC",
    "REGION_FENCE_SPEC",
    "SPECS",
    "STRONGEST_CPU_SPEC",
]
