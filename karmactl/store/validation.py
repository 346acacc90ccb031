"""What Karmada's webhooks check, at load: one user object (:func:`normalize_object`) and the
run's settings (:func:`settings_of`), each failure an :class:`~karmactl.store.objects.InputError`
naming the file, line, object and field.

Below the run and the incremental engine (``karmactl/reconcile.py``, ``karmactl/incremental/``),
which both check what they read with it; ``karmactl.reconcile`` re-exports both names.
"""
from __future__ import annotations

from karmactl.api.objects import describe_key
from karmactl.api.snapshot import Settings, Snapshot
from karmactl.store.state import InputError, Source, key_of


def normalize_object(obj: dict, src: Source, registry, owned: bool = False, strict: bool = False) -> dict:
    """Alias normalisation, defaulting and validation of one user object (Karmada's webhooks).

    Args:
        owned: the caller hands ``obj`` over (a freshly parsed object): it may be rewritten in
            place instead of copied. Otherwise ``obj`` is left as it is.
        strict: first check a built-in kind against its Kubernetes OpenAPI schema as written
            (``karmactl.api.openapi.strict_errors``: unknown fields, wrong types), as ``kubectl
            apply --validate=strict``; ``apply`` asks for it.

    Raises:
        InputError: naming the file, line and object, and every invalid field (Karmada's
            webhooks aggregate all field errors of an object into one response).
    """
    from karmactl.api.defaults import default_object, normalize_aliases
    from karmactl.api.validation import validate_defaulted

    label = describe_key(key_of(obj))
    try:
        if strict:
            from karmactl.api.openapi import strict_errors

            schema_errors = strict_errors(obj)
            if schema_errors:  # a built-in kind: the schema's verdict is the whole verdict (no webhook)
                raise InputError.several([InputError(message, src.path, src.line, label, path)
                                          for path, message in schema_errors])
        obj, errors = normalize_aliases(obj, copy=not owned)
        if not errors:
            obj = default_object(obj, copy=not owned)
            errors = validate_defaulted(obj, registry)
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
        # a field of a type no check above expected: still bad input, never an internal error
        raise InputError(f"a field has a type Kubernetes does not accept ({type(exc).__name__}: {exc})",
                         src.path, src.line, label) from None
    if errors:
        raise InputError.several([InputError(e.message, src.path, src.line, label, e.path) for e in errors])
    return obj


def settings_of(snap: Snapshot) -> Settings:
    """The run's settings from ``karmada-system/karmactl-config`` (raises :class:`InputError`)."""
    try:
        return Settings.from_snapshot(snap)
    except ValueError as exc:
        src = snap.sources.get(Settings.SETTINGS_KEY)
        raise InputError(str(exc), src.path if src else None, src.line if src else None,
                         "ConfigMap karmada-system/karmactl-config") from None
