"""``karmactl rebalance KIND/NAME...``: write a WorkloadRebalancer for the given workloads.

A shortcut for writing ``apps.karmada.io/v1alpha1`` WorkloadRebalancer by hand: the next reconcile
sets ``rescheduleTriggeredAt`` on each workload's binding and the scheduler places it afresh,
ignoring where its replicas are now (``karmactl/controllers/workload_rebalancer.py``)::

    karmactl rebalance deploy/nginx deploy/web -n apps --ttl 300
    karmactl reconcile
"""
from __future__ import annotations

import re
from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, out


def register(app: typer.Typer) -> None:
    """Add ``rebalance`` to the app."""

    @app.command()
    def rebalance(ctx: typer.Context,
                  targets: List[str] = typer.Argument(..., metavar="KIND/NAME...", help="Workloads, e.g. deploy/nginx."),
                  namespace: str = typer.Option("default", "-n", "--namespace"),
                  name: Optional[str] = typer.Option(None, "--name", help="Name of the WorkloadRebalancer "
                                                     "(default: rebalance-<time>)."),
                  ttl: Optional[int] = typer.Option(None, "--ttl", help="ttlSecondsAfterFinished: delete it this many "
                                                    "seconds after it finished.")):
        """Reschedule workloads afresh: write a WorkloadRebalancer (applied by the next reconcile)."""
        rebalance_cmd(ctx.obj, targets, namespace, name, ttl)


def rebalance_cmd(c: Context, targets: list[str], namespace: str, name: str | None, ttl: int | None) -> None:
    """Write the WorkloadRebalancer into the state directory.

    Raises:
        CLIError: a malformed target or ``--ttl`` (exit 2), an unknown workload (exit 1), a
            WorkloadRebalancer of that name that exists already (exit 2).
    """
    from karmactl.api.kinds import KindRegistry
    from karmactl.cli.stores import load_snapshot, store_of
    from karmactl.cli.objects import find, not_found, resolve_kind
    from karmactl.store.edit import append_new
    from karmactl.store.fsio import state_lock

    if ttl is not None and ttl < 0:
        raise CLIError(f"invalid --ttl {ttl}: must be 0 or more seconds")
    name = name or "rebalance-" + re.sub(r"[^0-9a-z]", "", c.now.lower())
    store = store_of(c)
    with state_lock(store.root):
        snap = load_snapshot(c)
        workloads = []
        for target in targets:
            if "/" not in target:
                raise CLIError(f'invalid resource "{target}": expected KIND/NAME, e.g. deploy/nginx')
            kind_name, wname = target.split("/", 1)
            info = resolve_kind(snap, kind_name)
            if info.karmada:
                raise CLIError(f"{info.kind} is a Karmada object, not a workload template")
            if find(snap, info, wname, namespace) is None:
                raise not_found(info, wname)
            ref = {"apiVersion": info.api_version, "kind": info.kind, "name": wname}
            if info.namespaced:
                ref["namespace"] = namespace
            workloads.append(ref)
        rinfo = KindRegistry.default().by_group_kind("apps.karmada.io", "WorkloadRebalancer")
        if find(snap, rinfo, name, "") is not None:
            raise CLIError(f'workloadrebalancer "{name}" exists already: give another --name', ExitCode.INPUT_ERROR)
        spec: dict = {"workloads": workloads}
        if ttl is not None:
            spec["ttlSecondsAfterFinished"] = ttl
        path = append_new(store, rinfo, {"apiVersion": rinfo.api_version, "kind": rinfo.kind,
                                         "metadata": {"name": name}, "spec": spec})
    out(f"workloadrebalancer.apps.karmada.io/{name} created ({store.rel(path)}); the next reconcile reschedules "
        f"{len(workloads)} workload(s)")


__all__ = ["rebalance_cmd", "register"]
