"""What every object of the state directory is keyed and checked by: :class:`InputError` (bad
input, exit code 2), its key (:func:`key_of`), where a user object lives (:class:`Source`), the
kinds karmactl computes, file-name components (:func:`path_part`) and the checks every object needs
before it can be keyed (:func:`check_object`)."""
from __future__ import annotations

from dataclasses import dataclass

from karmactl.api.kinds import UNSUPPORTED_KARMADA_KINDS, KindInfo, KindRegistry, group_of
from karmactl.api.snapshot import Key  # (group, kind, namespace, name)
from karmactl.store.notes import note

COMPUTED_KINDS = {("work.karmada.io", "ResourceBinding"), ("work.karmada.io", "ClusterResourceBinding"),
                  ("work.karmada.io", "Work")}


class InputError(Exception):
    """Bad input: names the file (and line), the object and the field. Exit code 2.

    One exception may carry several errors (every invalid field of an object, every bad file
    given to ``apply``): the first in its own attributes, the others in ``more``; ``str()`` puts
    each further one on its own ``error: ...`` line, as the CLI prints the first.

    Attributes:
        file: path of the file, relative to the state directory or as given.
        line: 1-based line of the document (or of the YAML error), or None.
        obj: ``Kind namespace/name`` of the object, or None.
        field: the offending field path, or None.
        more: further errors, each an :class:`InputError` without ``more`` of its own.
    """

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 obj: str | None = None, field: str | None = None, more: list | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.obj = obj
        self.field = field
        self.more: list[InputError] = [m if isinstance(m, InputError) else InputError(*m) for m in more or ()]

    @classmethod
    def several(cls, errors: list[InputError]) -> InputError:
        """One exception for ``errors`` (at least one), in their order."""
        flat = [e for err in errors for e in err.all()]
        first = flat[0]
        return cls(first.message, first.file, first.line, first.obj, first.field, flat[1:])

    def all(self) -> list[InputError]:
        """This error and the further ones, each alone."""
        return [InputError(self.message, self.file, self.line, self.obj, self.field), *self.more]

    def fields(self) -> list:
        """``[message, file, line, object, field, [further errors' fields]]``: JSON-friendly, the
        positional arguments of the constructor."""
        return [self.message, self.file, self.line, self.obj, self.field, [e.fields()[:5] for e in self.more]]

    def __reduce__(self):  # keeps file, line, object and field when sent between processes
        return (InputError, tuple(self.fields()))

    def _one(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        what = f"{self.obj}: " if self.obj else ""
        fld = f"{self.field}: " if self.field else ""
        return f"{where}{what}{fld}{self.message}"

    def __str__(self) -> str:
        return "".join([self._one(), *(f"\nerror: {e._one()}" for e in self.more)])


NAME_MAX = 255  # bytes in one file name on Linux file systems


def path_part(value: str, what: str, ext: str = "") -> str:
    """``value`` as one file-name component (``ext`` appended) that stays where it is put.

    A component that would not stay inside its directory (empty, ``.``, ``..``, holding ``/`` or
    NUL) is refused; a name too long for the file system (``NAME_MAX`` bytes, e.g. a valid
    253-character Kubernetes name plus ``.yaml``) is shortened to a prefix and a hash of the whole
    name, so every valid name has a file. Readers key objects on their content, not their file
    name, so the shortening is invisible.

    Raises:
        InputError: naming ``what`` (e.g. ``metadata.name``) and the value.
    """
    if (not isinstance(value, str) or value in ("", ".", "..") or "/" in value or "\0" in value
            or "\\" in value):
        raise InputError(f"{value!r} cannot be used as a file name (it must stay inside the state directory)",
                         field=what)
    name = value + ext
    if len(name.encode("utf-8", "surrogatepass")) > NAME_MAX:
        import hashlib

        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = value.encode("utf-8", "surrogatepass")[:NAME_MAX - 24 - len(ext)].decode("utf-8", "ignore") + "-" + digest + ext
    return name


def key_of(obj: dict) -> Key:
    """(group, kind, namespace, name) of an object dict."""
    m = obj.get("metadata") or {}
    return (group_of(obj.get("apiVersion", "")), obj.get("kind", ""), m.get("namespace") or "", m.get("name", ""))


@dataclass
class Source:
    """Where a user-written object lives: relative path, 0-based document index and 1-based line."""

    path: str
    index: int
    line: int


def _check_crd_names(obj: dict, display: str, line: int | None, label: str | None) -> None:
    """A CRD's group and plural name directories (``<plural>/``, ``computed/status/<plural>.<group>/``):
    as the API server's CRD validation, the plural must be a DNS-1035 label and the group a DNS
    subdomain.

    Raises:
        InputError: naming the field.
    """
    from karmactl.api.validation_fields import dns1035_label, dns1123_subdomain

    spec, names = obj.get("spec"), (obj.get("spec") or {}).get("names") if isinstance(obj.get("spec"), dict) else None
    for path, value in (("spec", spec), ("spec.names", names)):
        if not isinstance(value, dict):
            raise InputError("required field is missing" if value is None else
                             f"must be an object, not {type(value).__name__}", display, line, label, path)
    plural, group = names.get("plural"), spec.get("group")
    if not isinstance(plural, str) or dns1035_label(plural):
        raise InputError(f"{plural!r} is not a DNS-1035 label (lowercase letters, digits, '-')", display, line,
                         label, "spec.names.plural")
    if not isinstance(group, str) or dns1123_subdomain(group):
        raise InputError(f"{group!r} is not a DNS subdomain", display, line, label, "spec.group")


def check_object(obj: dict, registry: KindRegistry, display: str, line: int | None) -> KindInfo:
    """Check what every object needs before it can be keyed: apiVersion, a known kind, a name.

    A namespaced object without ``metadata.namespace`` gets ``default``; a cluster-scoped one
    written with it loses it, as the API server clears it (a ``-v`` note says so; ``apply`` warns).

    Raises:
        InputError: naming the file, line, object and field.
    """
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    label = f"{kind or '?'} {name}" if name else (kind or None)
    if not isinstance(api_version, str) or not api_version:
        raise InputError("required field is missing", display, line, label, "apiVersion")
    if not isinstance(kind, str) or not kind:
        raise InputError("required field is missing", display, line, label, "kind")
    if not isinstance(meta, dict):
        raise InputError("required field is missing", display, line, label, "metadata")
    if not isinstance(name, str) or not name:
        raise InputError("required field is missing", display, line, label, "metadata.name")
    unsupported = UNSUPPORTED_KARMADA_KINDS.get((group_of(api_version), kind))
    if unsupported is not None:
        raise InputError(f"{kind} ({unsupported}) is not supported by karmactl: Karmada's control plane runs it "
                         f"(see `karmactl export --to-karmada`)", display, line, label, "kind")
    if kind == "CustomResourceDefinition":
        _check_crd_names(obj, display, line, label)
    info = registry.for_object(api_version, kind)
    if info is None:
        from karmactl.api.kinds import suggest_for_object

        raise InputError(f'unknown kind "{kind}" in apiVersion "{api_version}" (no built-in kind and no '
                         f"CustomResourceDefinition in the state directory defines it)"
                         f"{suggest_for_object(registry, api_version, kind)}", display, line, label, "kind")
    ns = meta.get("namespace")
    if ns is not None and not isinstance(ns, str):
        raise InputError("must be a string", display, line, label, "metadata.namespace")
    if info.namespaced and not ns:
        meta["namespace"] = "default"
    elif not info.namespaced and ns:
        # the API server clears it (rest.BeforeCreate: a cluster-scoped strategy sets NamespaceNone)
        del meta["namespace"]
        note(f"{display}:{line}: {kind} {name}: {cleared_namespace_message(ns)}")
    return info


def cleared_namespace_message(namespace: str) -> str:
    """What is said of a cluster-scoped object written with ``metadata.namespace``."""
    return (f'metadata.namespace "{namespace}" cleared: the kind is cluster-scoped (the API server clears it '
            f"too)")
