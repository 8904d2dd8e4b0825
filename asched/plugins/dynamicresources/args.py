"""DynamicResourcesArgs: the plugin's two timeouts, parsed and validated as
kube-scheduler's ValidateDynamicResourcesArgs does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from asched.base.durations import DurationError, parse_duration
from asched.framework.registry import ArgsError
from asched.plugins.dynamicresources.readiness import BINDING_TIMEOUT_DEFAULT
from asched.plugins.helpers import check_fields, field_path

# config.DynamicResourcesFilterTimeoutDefault
FILTER_TIMEOUT_DEFAULT = 10.0


@dataclass(frozen=True, slots=True)
class DynamicResourcesArgs:
    """filterTimeout: how long Filter may search one node's devices (10s; 0 turns the
    limit off; negative is refused), bindingTimeout: how long PreBind waits for binding
    conditions (600s; under 1s is refused), as ValidateDynamicResourcesArgs checks them.
    The filter timeout matters more to asched than to Go: Filter runs on the event
    loop, so a search that explodes would stall every other pod."""

    filter_timeout: float = FILTER_TIMEOUT_DEFAULT
    binding_timeout: float = BINDING_TIMEOUT_DEFAULT

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], path: str) -> Self:
        check_fields(raw, ("filterTimeout", "bindingTimeout"), path)
        filter_timeout = _duration(raw, "filterTimeout", path, FILTER_TIMEOUT_DEFAULT)
        if filter_timeout < 0:
            raise ArgsError(
                field_path(path, "filterTimeout"),
                f'Invalid value: "{raw["filterTimeout"]}": must be zero or positive',
            )
        binding_timeout = _duration(raw, "bindingTimeout", path, BINDING_TIMEOUT_DEFAULT)
        if binding_timeout < 1:
            raise ArgsError(
                field_path(path, "bindingTimeout"),
                f'Invalid value: "{raw["bindingTimeout"]}": must be at least 1 second',
            )
        return cls(filter_timeout, binding_timeout)


def _duration(raw: Mapping[str, Any], key: str, path: str, default: float) -> float:
    """A metav1.Duration field: a Go duration string."""
    value = raw.get(key)
    if value is None:
        return default
    where = field_path(path, key)
    if not isinstance(value, str):
        raise ArgsError(where, f"Invalid value: {value!r}: expected a duration string")
    try:
        return parse_duration(value)
    except DurationError as exc:
        raise ArgsError(where, f"Invalid value: {value!r}: {exc}") from None
