"""What commands read from the state directory: the store, the snapshot, stored Events, the kinds
of the state directory, the clock of a run and the member layer (shared by the command modules of
:mod:`karmactl.cli.cmd`)."""
from __future__ import annotations

from karmactl.cli.context import CLIError, Context, ExitCode
from karmactl.store.state import StateStore


def store_of(c: Context) -> StateStore:
    """The store of ``c``'s state directory (nothing read yet)."""
    return StateStore(c.state)


def load_snapshot(c: Context):
    """The whole state directory, loaded and checked (:func:`karmactl.reconcile.load`).

    Raises:
        InputError: the state directory does not load (exit 2).
    """
    from karmactl.reconcile import load
    return load(store_of(c))


def load_for_reading(c: Context, kinds_of):
    """The snapshot ``get`` and ``describe`` read: when every user file is as the last load left it,
    from the parse cache with the computed files of only the kinds or objects ``kinds_of(registry) ->
    iterable of (group, kind) or (group, kind, namespace, name)`` names (:meth:`StateStore.load_cached`: a 10,000-binding state directory
    holds some 40,000 computed files); otherwise the whole state directory, checked
    (:func:`load_snapshot`).

    Raises:
        InputError: the state directory does not load (exit 2).
        whatever ``kinds_of`` raises (CLIError for an unknown kind).
    """
    from karmactl.store.state import validation_tag

    snap = store_of(c).load_cached(validation_tag(), kinds_of)
    return snap if snap is not None else load_snapshot(c)


def registry_of(c: Context):
    """Kinds known to this state directory: karmactl's own and those its CRDs define."""
    from karmactl.store.edit import index_user_objects
    from karmactl.store.state import StateStore

    store = StateStore(c.state)
    if c.state.is_dir():
        index_user_objects(store)  # registers the CRDs found among the files
    return store.registry


def event_rows(c: Context, name: str | None, namespace: str, all_namespaces: bool) -> list[dict]:
    """Stored Events (karmactl/store/events.py), oldest last seen first, as kubectl lists them."""
    from karmactl.pipeline.events import last_seen
    from karmactl.store.events import load_events

    events = load_events(c.state, None if all_namespaces and not name else namespace)
    if name:
        events = [e for e in events if e["metadata"]["name"] == name]
    return sorted(events, key=lambda e: (last_seen(e), e["metadata"]["namespace"], e["metadata"]["name"]))


def wall_now(c: Context) -> str:
    """The clock for a run (RFC 3339): ``--now`` when given, else the wall clock read now (later runs of
    ``--wait``, ``--watch`` and ``unjoin`` read it again)."""
    if c.now_text:
        return c.now
    from datetime import datetime, timezone
    from karmactl.api.objects import format_time
    return format_time(datetime.now(timezone.utc))


def member_layer(c: Context, offline: bool = False, missing: str = "member support is not installed; use --offline",
                 code: ExitCode = ExitCode.INPUT_ERROR):
    """The layer that reaches the members (:class:`karmactl.members.layer.MemberLayer`), None ``offline``.

    Raises:
        CLIError: ``missing`` (exit ``code``) when karmactl's member support is not installed.
    """
    if offline:
        return None
    try:
        from karmactl.members.layer import MemberLayer
    except ModuleNotFoundError:
        raise CLIError(missing, code) from None
    return MemberLayer.from_context(c)
