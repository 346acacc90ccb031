"""``karmactl unjoin``: remove a Push member (karmadactl ``pkg/karmadactl/unjoin/unjoin.go``): delete
what was propagated to it, then its Works and its Cluster file (:mod:`karmactl.unjoin`)."""
from __future__ import annotations

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.flags import parse_duration
from karmactl.cli.membership import CLUSTER_KEY
from karmactl.cli.stores import member_layer, store_of, wall_now

MEMBERS_MISSING = "member support is not installed (karmactl.members.layer)"


def _execution_works(snap, name: str) -> list:
    from karmactl.api.names import execution_namespace
    ns = execution_namespace(name)
    return sorted(k for k in snap.works if k[2] == ns)


def unjoin_cluster(c: Context, name: str, force: bool = False, wait: float = 60.0, dry_run: bool = False,
                   quiet: bool = False) -> list:
    """Remove a Push member: delete its member copies, drop its Works, remove its Cluster file.

    Karmada deletes the Cluster object and waits (``--wait``) until the execution controller has
    removed every Work of ``karmada-es-<name>`` (deleting member copies while the member is ready);
    with ``--force`` it drops what is left after the wait (``DeleteClusterObject``). karmactl does the
    same with runs of :func:`unjoin_pass`, one a second until ``wait`` seconds pass; nothing is
    written until an attempt succeeds or ``force`` gives up on the member.

    Returns:
        The keys of Works dropped without deleting their member copies (only with ``force``).

    Raises:
        CLIError: ``no cluster object <n> found in karmada control Plane`` (exit 1); a Pull
            cluster (exit 2); member copies remain after ``wait`` without ``force`` (exit 3).
        InputError / NotConvergedError: from the run.
    """
    from karmactl.reconcile import load
    from karmactl.unjoin import UnjoinError, unjoin
    from karmactl.store.fsio import state_lock

    store = store_of(c)
    if dry_run:
        before = load(store)
        key = CLUSTER_KEY + (name,)
        if key not in before.user:
            raise CLIError(f"no cluster object {name} found in karmada control Plane", ExitCode.NOT_FOUND)
        for wkey in _execution_works(before, name):
            out(f"delete  work {wkey[2]}/{wkey[3]}")
        out(f"delete  cluster {name} ({before.sources[key].path})")
        err("dry run: nothing written")
        return []

    def waiting(remaining, why):
        err(f"Waiting for the cluster object {name} to be deleted ({len(remaining)} Work(s) left: {why})")

    with state_lock(store.root):
        try:
            dropped, report = unjoin(store, name, member_layer(c, missing=MEMBERS_MISSING, code=ExitCode.MEMBER_FAILURE), lambda: wall_now(c), wait, force, waiting)
        except UnjoinError as exc:
            code = {"NotFound": ExitCode.NOT_FOUND, "Timeout": ExitCode.MEMBER_FAILURE}.get(exc.reason, ExitCode.INPUT_ERROR)
            raise CLIError(str(exc), code) from None
    if dropped:
        err(f"warning: deleting the cluster object timed out; forced deletion of cluster({name}) leaves the "
            f"member copies of {len(dropped)} Work(s) in the member")
    for w in report.warnings:
        err(f"warning: {w}")
    for other, msg in sorted(report.member_errors.items()):
        if other != name:
            err(f"member {other}: {msg}")
    if not quiet:
        out(f"cluster({name}) is unjoined successfully")
    return dropped


def register(app: typer.Typer) -> None:
    """Add ``unjoin`` to the app."""

    @app.command(rich_help_panel="Cluster registration")
    def unjoin(ctx: typer.Context,
               name: str = typer.Argument(..., metavar="CLUSTER_NAME"),
               force: bool = typer.Option(False, "--force", help="After --wait, remove the Cluster even if member copies remain."),
               wait: str = typer.Option("60s", "--wait", help="How long to wait for the member copies to be deleted."),
               dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be removed; contact nothing.")):
        """Remove a member: delete what was propagated to it, then its Works and its Cluster file."""
        secs = parse_duration(wait, "--wait")
        if secs <= 0:
            raise CLIError(f" --wait {wait}  must be a positive duration, e.g. 1m0s ")
        unjoin_cluster(ctx.obj, name, force, secs, dry_run)
