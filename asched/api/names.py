"""apimachinery's name checks with their exact messages, for validation that quotes them.

`qualified_name_errors` is content.IsQualifiedName (IsLabelKey) and
`is_extended_resource_name` core/v1 helper.IsExtendedResourceName, so a config refused
here is refused with the words kube-scheduler uses.
"""

from __future__ import annotations

import re

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_KEY = re.compile(f"^{_LABEL_KEY_FMT}$")
_LABEL_KEY_MAX = 63
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MAX = 253


def go_quote(s: str) -> str:
    """Go's %q for printable text (quotes and backslashes escaped)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """content.RegexError."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def dns1123_subdomain_errors(value: str) -> list[str]:
    """content.IsDNS1123Subdomain."""
    errs = []
    if len(value) > _DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {_DNS1123_SUBDOMAIN_MAX} characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """content.IsQualifiedName: why *value* is not a qualified name ([] when it is)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain_errors(prefix)]
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > _LABEL_KEY_MAX:
        errs.append(f"name part must be no more than {_LABEL_KEY_MAX} characters")
    if not _LABEL_KEY.fullmatch(name):
        errs.append(
            "name part "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_extended_resource_name(name: str) -> bool:
    """helper.IsExtendedResourceName: domain-prefixed, outside *kubernetes.io/, and still a
    qualified name once quota's "requests." prefix is put in front."""
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)
