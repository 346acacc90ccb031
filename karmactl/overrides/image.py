"""Container image references and the ``imageOverrider`` (semantics §9.3).

Parsing follows ``github.com/distribution/reference`` (``Parse``, the grammar in ``regexp.go``)
and ``pkg/util/imageparser/parser.go``; the overrider follows
``pkg/util/overridemanager/imageoverride.go``. Unlike ``ParseNormalizedNamed`` there is no
``docker.io/library`` normalisation: ``nginx`` has no registry.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = _ALNUM + r"(?:" + _SEPARATOR + _ALNUM + r")*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = _DOMAIN_COMPONENT + r"(?:\." + _DOMAIN_COMPONENT + r")*"
_HOST = r"(?:" + _DOMAIN_NAME + r"|\[(?:[a-fA-F0-9:]+)\])"
_DOMAIN_AND_PORT = _HOST + r"(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9A-Fa-f]{32,}"
_REMOTE_NAME = _PATH_COMPONENT + r"(?:/" + _PATH_COMPONENT + r")*"
_NAME = r"(?:" + _DOMAIN_AND_PORT + r"/)?" + _REMOTE_NAME

# Go's \w is ASCII-only; re.ASCII keeps Python's the same.
_REFERENCE_RE = re.compile(r"^(" + _NAME + r")(?::(" + _TAG + r"))?(?:@(" + _DIGEST + r"))?$", re.ASCII)
_TAG_RE = re.compile(r"^" + _TAG + r"$", re.ASCII)
_DIGEST_RE = re.compile(r"^" + _DIGEST + r"$", re.ASCII)
_DIGEST_HEX_LEN = {"sha256": 64, "sha384": 96, "sha512": 128}
_NAME_TOTAL_LENGTH_MAX = 255


class ImageError(ValueError):
    """An image reference that Docker's reference grammar rejects."""


@dataclass
class ImageComponents:
    """``[hostname/]repository[:tag|@digest]`` (``imageparser.Components``)."""

    hostname: str = ""
    repository: str = ""
    tag: str = ""
    digest: str = ""

    def tag_or_digest(self) -> str:
        return self.tag or self.digest

    def set_tag_or_digest(self, value: str) -> None:
        # A value that is neither a tag nor a digest leaves the image unchanged.
        if _TAG_RE.match(value):
            self.tag, self.digest = value, ""
        elif _DIGEST_RE.match(value):
            self.digest, self.tag = value, ""

    def remove_tag_or_digest(self) -> None:
        if self.tag:
            self.tag = ""
        else:
            self.digest = ""

    def full_repository(self) -> str:
        return f"{self.hostname}/{self.repository}" if self.hostname else self.repository

    def __str__(self) -> str:
        if self.tag:
            return f"{self.full_repository()}:{self.tag}"
        if self.digest:
            return f"{self.full_repository()}@{self.digest}"
        return self.full_repository()


def _split_hostname(name: str) -> tuple[str, str]:
    # The first segment is a registry only if it looks like a host: has "." or ":" or is localhost.
    i = name.find("/")
    if i == -1 or (not any(c in name[:i] for c in ".:") and name[:i] != "localhost"):
        return "", name
    return name[:i], name[i + 1:]


def _validate_digest(digest: str) -> None:
    algorithm, _, encoded = digest.partition(":")
    expected = _DIGEST_HEX_LEN.get(algorithm)
    if expected is None:
        raise ImageError("unsupported digest algorithm")
    if len(encoded) != expected:
        raise ImageError("invalid checksum digest length")
    if not re.fullmatch(r"[a-f0-9]+", encoded):
        raise ImageError("invalid checksum digest format")


def parse_image(image: str) -> ImageComponents:
    """Split an image reference into its components.

    When both a tag and a digest are given the tag is kept and the digest dropped, as Karmada does.

    Raises:
        ImageError: the reference is empty, has upper-case letters in its name, is malformed, has a
            repository path longer than 255 characters or an invalid digest.
    """
    match = _REFERENCE_RE.match(image)
    if match is None:
        if image == "":
            raise ImageError("repository name must have at least one component")
        if _REFERENCE_RE.match(image.lower()):
            raise ImageError("repository name must be lowercase")
        raise ImageError("invalid reference format")
    name, tag, digest = match.group(1), match.group(2) or "", match.group(3) or ""
    hostname, repository = _split_hostname(name)
    path = name
    anchored = re.match(r"^(?:(" + _DOMAIN_AND_PORT + r")/)?(" + _REMOTE_NAME + r")$", name, re.ASCII)
    if anchored and anchored.group(1):
        path = anchored.group(2)
    if len(path) > _NAME_TOTAL_LENGTH_MAX:
        raise ImageError(f"repository name must not be more than {_NAME_TOTAL_LENGTH_MAX} characters")
    if digest:
        _validate_digest(digest)
    comp = ImageComponents(hostname=hostname, repository=repository)
    if tag:
        comp.tag = tag
    elif digest:
        comp.digest = digest
    return comp


def override_image(image: str, overrider: dict) -> str:
    """Apply one ``imageOverrider`` entry ``{component, operator, value}`` to an image string.

    ``add`` appends ``value`` to the component, ``replace`` sets it, ``remove`` clears it (Tag: the
    tag, or the digest when there is no tag). Unknown operators leave the component as is.

    Raises:
        ImageError: the image cannot be parsed or the component is not Registry/Repository/Tag.
    """
    try:
        comp = parse_image(image)
    except ImageError as err:
        raise ImageError(f"failed to parse image value({image}), error: {err}") from None
    component = overrider.get("component")
    operator = overrider.get("operator")
    value = overrider.get("value") or ""
    if component == "Registry":
        if operator == "add":
            comp.hostname = comp.hostname + value
        elif operator == "replace":
            comp.hostname = value
        elif operator == "remove":
            comp.hostname = ""
    elif component == "Repository":
        if operator == "add":
            comp.repository = comp.repository + value
        elif operator == "replace":
            comp.repository = value
        elif operator == "remove":
            comp.repository = ""
    elif component == "Tag":
        if operator == "add":
            comp.set_tag_or_digest(comp.tag_or_digest() + value)
        elif operator == "replace":
            comp.set_tag_or_digest(value)
        elif operator == "remove":
            comp.remove_tag_or_digest()
    else:
        raise ImageError(f"unsupported image component({component})")
    return str(comp)
