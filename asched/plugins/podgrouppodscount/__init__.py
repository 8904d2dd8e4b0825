"""PodGroupPodsCount: favors the placements that place more of a pod group."""

from asched.plugins.podgrouppodscount.podgroup_pods_count import NAME, SPEC, PodGroupPodsCount

__all__ = ["NAME", "SPEC", "PodGroupPodsCount"]
