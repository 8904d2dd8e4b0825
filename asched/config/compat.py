"""Which files we read: apiVersion and kind, and the spellings we accept with a warning.

kube-scheduler 1.29+ reads only `kubescheduler.config.k8s.io/v1`, kind
`KubeSchedulerConfiguration`. Files found in the wild (the seed article among them) still
say v1beta3, `kind: Configuration`, or capitalise extension points (`Filter:`). Those are
read as v1 with one warning per deviation, naming the field; anything else that is not v1
is an error. v1beta3's fields are v1's minus delayCacheUntilActive and a profile's
percentageOfNodesToScore, so reading it as v1 changes no meaning.
"""

from __future__ import annotations

from asched.config.errors import Problems
from asched.config.fields import Fields, type_name
from asched.config.model import API_VERSION, EXTENSION_POINTS, KIND

GROUP = "kubescheduler.config.k8s.io"
V1BETA3 = f"{GROUP}/v1beta3"
# Earlier versions are refused; naming the release that dropped them tells users how old
# their file is.
_REMOVED_IN = {
    f"{GROUP}/v1beta2": "was removed in Kubernetes 1.28",
    f"{GROUP}/v1beta1": "was removed in Kubernetes 1.26",
    f"{GROUP}/v1alpha2": "was removed from Kubernetes",
    f"{GROUP}/v1alpha1": "was removed from Kubernetes",
}
LEGACY_KIND = "Configuration"

# Extension point spelling in the file -> config name. camelCase is the schema; the
# capitalised form (the Go field names) is a tolerated deviation.
POINT_SPELLINGS: dict[str, str] = {
    **{p: p for p in ("multiPoint", *EXTENSION_POINTS)},
    **{p[0].upper() + p[1:]: p for p in ("multiPoint", *EXTENSION_POINTS)},
}
# A pod-group point kube-scheduler's config does not have either (GangScheduling is found
# by its interface there, as asched finds PlacementFeasible plugins).
UNSUPPORTED_POINTS = frozenset({"placementFeasible"})


def check_type_meta(top: Fields, problems: Problems) -> None:
    """apiVersion and kind of the whole file: v1 silently, v1beta3 and Configuration warned."""
    api_version = top.raw("apiVersion")
    path = top.at("apiVersion")
    if api_version is None:
        problems.error(path, f'required value; use "{API_VERSION}"')
    elif not isinstance(api_version, str):
        problems.error(path, f"must be a string, got {type_name(api_version)}")
    elif api_version == V1BETA3:
        problems.warn(path, f"{V1BETA3} was removed in Kubernetes 1.29; read as {API_VERSION}")
    elif api_version in _REMOVED_IN:
        problems.error(
            path,
            f"{api_version} {_REMOVED_IN[api_version]} and is not supported; use {API_VERSION}",
        )
    elif api_version != API_VERSION:
        problems.error(path, f'unsupported apiVersion "{api_version}"; use "{API_VERSION}"')

    kind = top.raw("kind")
    path = top.at("kind")
    if kind is None:
        problems.error(path, f'required value; use "{KIND}"')
    elif kind == LEGACY_KIND:
        problems.warn(path, f'"{LEGACY_KIND}" is not the kind of this schema; read as {KIND}')
    elif kind != KIND:
        problems.error(path, f'unsupported kind {kind!r}; use "{KIND}"')


def capitalised_points_warning(spellings: list[tuple[str, str]]) -> str:
    written = ", ".join(written for written, _ in spellings)
    meant = ", ".join(meant for _, meant in spellings)
    return f"capitalised extension point names ({written}) read as {meant}"


TOP_LEVEL_PLUGIN_CONFIG_WARNING = (
    "top-level pluginConfig is not part of KubeSchedulerConfiguration; applied to every "
    "profile (a profile's own pluginConfig entry for the same plugin wins)"
)
