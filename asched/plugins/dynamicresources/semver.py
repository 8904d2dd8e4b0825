"""Kubernetes' CEL semver library for DRA selectors (apiserver pkg/cel/library semverlib).

Version attributes are semver values in cel-go, not strings. The Rust CEL runtime only
carries plain values, so a version travels as a marked string: MARK + its canonical text
without build metadata. Two versions are then `==` exactly when blang/semver's Compare
says equal (build metadata does not count), a version is never `==` to a plain string,
and `semver()`, `isSemver()`, `major()`, `minor()`, `patch()`, `compareTo`,
`isGreaterThan` and `isLessThan` work on them as in Go (the comparisons keep working on
quantities too). Parsing follows blang/semver v4's Parse, with its error texts, and the
library's normalizeAndParse for `semver(s, true)`.
"""

from __future__ import annotations

from dataclasses import dataclass

# Cannot start an attribute string the API accepts, nor a CEL string literal in practice.
MARK = "\x00semver:"
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


class SemverError(ValueError):
    """blang/semver's parse error (its text is what cel-go reports)."""


@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()

    def encode(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        return MARK + text

    def compare(self, other: Version) -> int:
        """blang/semver Version.Compare."""
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return 1 if mine > theirs else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for a, b in zip(self.pre, other.pre, strict=False):
            c = _compare_pre(a, b)
            if c:
                return c
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))


def _compare_pre(a: int | str, b: int | str) -> int:
    """PRVersion.Compare: numbers sort before identifiers, each in their own order."""
    if isinstance(a, int) != isinstance(b, int):
        return -1 if isinstance(a, int) else 1
    return (a > b) - (a < b)  # type: ignore[operator]


def _number(text: str, what: str) -> int:
    if not text.isdigit() or not text.isascii():
        if text == "":
            raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
        raise SemverError(f'Invalid character(s) found in {what} number "{text}"')
    if len(text) > 1 and text[0] == "0":
        raise SemverError(f'{what.capitalize()} number must not contain leading zeroes "{text}"')
    return int(text)


def parse(text: str) -> Version:
    """blang/semver v4 Parse."""
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major, minor = _number(parts[0], "major"), _number(parts[1], "minor")
    patch, _, build = parts[2].partition("+")
    patch, has_pre, pre_text = patch.partition("-")
    number = _number(patch, "patch")
    pre: list[int | str] = []
    for p in pre_text.split(".") if has_pre else ():
        if not p:
            raise SemverError("Prerelease is empty")
        if p.isdigit() and p.isascii():
            if len(p) > 1 and p[0] == "0":
                raise SemverError(
                    f'Numeric PreRelease version must not contain leading zeroes "{p}"'
                )
            pre.append(int(p))
        elif set(p) <= _ALPHANUM:
            pre.append(p)
        else:
            raise SemverError(f'Invalid character(s) found in prerelease "{p}"')
    if "+" in parts[2]:
        for b in build.split("."):
            if not b:
                raise SemverError("Build meta data is empty")
            if not set(b) <= _ALPHANUM:
                raise SemverError(f'Invalid character(s) found in build meta data "{b}"')
    return Version(major, minor, number, tuple(pre))


def normalize_and_parse(text: str) -> Version:
    """semverlib's normalizeAndParse: no "v" prefix, leading zeros dropped, missing minor
    and patch filled with 0."""
    parts = text.removeprefix("v").split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            trimmed = p.lstrip("0")
            parts[i] = trimmed if trimmed and trimmed[0].isdigit() else "0" + trimmed
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse(".".join(parts))


def decode(value: object) -> Version | None:
    """The version a marked string carries; None for any other value."""
    if isinstance(value, str) and value.startswith(MARK):
        return parse(value[len(MARK) :])
    return None


def decode_or_none(value: object) -> Version | None:
    """decode, with an unparsable marked value counting as a version too."""
    if isinstance(value, str) and value.startswith(MARK):
        try:
            return parse(value[len(MARK) :])
        except SemverError:
            return Version(0, 0, 0)
    return None


def encode_attribute(text: str) -> str:
    """A version attribute as CEL sees it (the API validated it as semver; an invalid one
    stays marked as it is, so it still never equals a string)."""
    try:
        return parse(text).encode()
    except SemverError:
        return MARK + text


def semver(text: object, normalize: object = False) -> str:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise TypeError("No such overload")
    return (normalize_and_parse(text) if normalize else parse(text)).encode()


def is_semver(text: object, normalize: object = False) -> bool:
    if not isinstance(text, str) or not isinstance(normalize, bool):
        raise TypeError("No such overload")
    try:
        normalize_and_parse(text) if normalize else parse(text)
    except SemverError:
        return False
    return True


def part(name: str, index: int) -> object:
    """major(), minor() or patch(); on a value that is not a version, cel-go's runtime
    dispatch finds no overload and names the call."""

    def get(value: object) -> int:
        v = decode(value)
        if v is None:
            kind = {"str": "string"}.get(type(value).__name__, type(value).__name__)
            raise TypeError(f"no such overload: {name}({kind})")
        return (v.major, v.minor, v.patch)[index]

    return get


def versions(a: object, b: object) -> tuple[Version, Version] | None:
    """Both operands as versions, None when neither is one; a version against anything
    else is cel-go's "no such overload"."""
    va, vb = decode(a), decode(b)
    if va is None and vb is None:
        return None
    if va is None or vb is None:
        raise TypeError("No such overload")
    return va, vb
