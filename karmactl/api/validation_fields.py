"""Field errors and the Kubernetes string rules (names, label keys and values, annotations, JSON pointers).

The error kinds and their message shapes follow ``k8s.io/apimachinery/pkg/util/validation/field``
(``Required value``, ``Invalid value: <v>: <detail>``, ``Unsupported value: "x": supported values: ...``,
``Forbidden: ...``, ``Duplicate value: ...``, ``Too long: ...``); the string rules follow
``k8s.io/apimachinery/pkg/util/validation/validation.go`` and ``.../apis/meta/v1/validation``.

Paths are dotted with list indexes and map keys in brackets, as ``field.Path`` prints them:
``spec.resourceSelectors[0].kind``, ``metadata.labels[app]``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    """One validation failure.

    Attributes:
        path: the field, e.g. ``spec.placement.replicaScheduling.replicaDivisionPreference``.
        message: Karmada's / Kubernetes' message gist, e.g.
            ``Unsupported value: "Foo": supported values: "Aggregated", "Weighted"``.
    """

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


# --- paths -----------------------------------------------------------------------------------

def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k) -> str:
    return f"{path}[{k}]"


# --- value rendering and error constructors --------------------------------------------------

def render(value) -> str:
    """A value as ``field.Error`` prints scalars: strings quoted, booleans lowercase, nil ``null``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, sort_keys=True, default=str)


def type_name(value) -> str:
    """The JSON type of a loaded YAML value, as the OpenAPI validator names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, f"Required value: {detail}" if detail else "Required value")


def invalid(path: str, value, detail: str) -> FieldError:
    """``Invalid value: <v>: <detail>``; composite values (objects, lists) are left out, as the
    Go structs Karmada would print there are unreadable."""
    if isinstance(value, (dict, list)):
        return FieldError(path, f"Invalid value: {detail}")
    return FieldError(path, f"Invalid value: {render(value)}: {detail}")


def not_supported(path: str, value, supported) -> FieldError:
    values = ", ".join(json.dumps(v) for v in supported)
    return FieldError(path, f"Unsupported value: {render(value)}: supported values: {values}")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, f"Forbidden: {detail}")


def duplicate(path: str, detail: str) -> FieldError:
    return FieldError(path, f"Duplicate value: {detail}")


def too_long(path: str, limit: int) -> FieldError:
    return FieldError(path, f"Too long: may not be more than {limit} bytes")


def wrong_type(path: str, value, want: str) -> FieldError:
    return FieldError(path, f"Invalid value: {json.dumps(type_name(value))}: must be of type {want}")


def unknown_field(path: str) -> FieldError:
    # kubectl's strict field validation wording (``--validate=strict``).
    return FieldError(path, f'unknown field "{path}"')


# --- Kubernetes string rules ------------------------------------------------------------------

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _QUALIFIED_NAME + ")?"

_RE_LABEL = re.compile(f"^{_DNS1123_LABEL}$")
_RE_SUBDOMAIN = re.compile(f"^{_DNS1123_SUBDOMAIN}$")
_RE_DNS1035 = re.compile(f"^{_DNS1035_LABEL}$")
_RE_QUALIFIED = re.compile(f"^{_QUALIFIED_NAME}$")
_RE_LABEL_VALUE = re.compile(f"^{_LABEL_VALUE}$")

MAX_LABEL_LENGTH = 63
MAX_SUBDOMAIN_LENGTH = 253
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def _regex_msg(what: str, regex: str, examples: tuple[str, ...]) -> str:
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{what} (e.g. {shown}, regex used for validation is '{regex}')"


def dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: at most 63 characters of ``[a-z0-9-]``, alphanumeric at both ends."""
    errs = []
    if len(value) > MAX_LABEL_LENGTH:
        errs.append(f"must be no more than {MAX_LABEL_LENGTH} characters")
    if not _RE_LABEL.match(value):
        errs.append(_regex_msg("a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                               "or '-', and must start and end with an alphanumeric character",
                               _DNS1123_LABEL, ("my-name", "123-abc")))
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: at most 253 characters, dot-separated DNS labels."""
    errs = []
    if len(value) > MAX_SUBDOMAIN_LENGTH:
        errs.append(f"must be no more than {MAX_SUBDOMAIN_LENGTH} characters")
    if not _RE_SUBDOMAIN.match(value):
        errs.append(_regex_msg("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                               "characters, '-' or '.', and must start and end with an alphanumeric character",
                               _DNS1123_SUBDOMAIN, ("example.com",)))
    return errs


def dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label`` (Service names)."""
    errs = []
    if len(value) > MAX_LABEL_LENGTH:
        errs.append(f"must be no more than {MAX_LABEL_LENGTH} characters")
    if not _RE_DNS1035.match(value):
        errs.append(_regex_msg("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                               "start with an alphabetic character, and end with an alphanumeric character",
                               _DNS1035_LABEL, ("my-name", "abc-123")))
    return errs


def qualified_name(value: str) -> list[str]:
    """``IsQualifiedName``: label and annotation keys, ``[prefix/]name``."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        errs = []
    elif len(parts) == 2:
        prefix, name = parts
        errs = []
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain(prefix))
    else:
        return [_regex_msg("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
                           "must start and end with an alphanumeric character with an optional DNS subdomain "
                           "prefix and '/'", _QUALIFIED_NAME, ("MyName", "my.name", "123-abc"))]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > MAX_LABEL_LENGTH:
        errs.append(f"name part must be no more than {MAX_LABEL_LENGTH} characters")
    if name and not _RE_QUALIFIED.match(name):
        errs.append("name part " + _regex_msg("must consist of alphanumeric characters, '-', '_' or '.', and must "
                                              "start and end with an alphanumeric character",
                                              _QUALIFIED_NAME, ("MyName", "my.name", "123-abc")))
    return errs


def label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or at most 63 characters of ``[A-Za-z0-9-_.]``."""
    errs = []
    if len(value) > MAX_LABEL_LENGTH:
        errs.append(f"must be no more than {MAX_LABEL_LENGTH} characters")
    if not _RE_LABEL_VALUE.match(value):
        errs.append(_regex_msg("a valid label must be an empty string or consist of alphanumeric characters, "
                               "'-', '_' or '.', and must start and end with an alphanumeric character",
                               _LABEL_VALUE, ("MyValue", "my_value", "12345")))
    return errs


def check_label_name(value, path: str) -> list[FieldError]:
    """``ValidateLabelName``: a string that is a qualified name."""
    if not isinstance(value, str):
        return [wrong_type(path, value, "string")]
    return [invalid(path, value, m) for m in qualified_name(value)]


def check_labels(labels, path: str) -> list[FieldError]:
    """``ValidateLabels``: a map of qualified-name keys to label values."""
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [wrong_type(path, labels, "object")]
    errs: list[FieldError] = []
    for k, v in labels.items():
        errs += check_label_name(k, path)
        if not isinstance(v, str):
            errs.append(wrong_type(key(path, k), v, "string"))
        else:
            errs += [invalid(path, v, m) for m in label_value(v)]
    return errs


def check_annotations(annotations, path: str) -> list[FieldError]:
    """``ValidateAnnotations``: qualified-name keys (checked lowercased), total size <= 256 KiB."""
    if annotations is None:
        return []
    if not isinstance(annotations, dict):
        return [wrong_type(path, annotations, "object")]
    errs: list[FieldError] = []
    total = 0
    for k, v in annotations.items():
        if not isinstance(k, str):
            errs.append(wrong_type(path, k, "string"))
            continue
        errs += [invalid(path, k, m) for m in qualified_name(k.lower())]
        if not isinstance(v, str):
            errs.append(wrong_type(key(path, k), v, "string"))
            continue
        total += len(k) + len(v)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def json_pointer_error(value) -> str | None:
    """Why ``value`` is not a JSON pointer (go-openapi ``jsonpointer.New``), or None."""
    if not isinstance(value, str):
        return "must be of type string"
    if value and not value.startswith("/"):
        return 'JSON pointer must be empty or start with a "/"'
    return None
