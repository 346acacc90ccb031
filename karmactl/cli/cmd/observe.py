"""``karmactl observe``: record by hand what a member reports about one workload.

As ``cluster condition set`` records a cluster's health, ``observe`` records a workload's status
and health on one member cluster into the status of its Work (``manifestStatuses``, as Karmada's
work status controller writes it from the member, ``pkg/controllers/status/work_status_controller.go``)
with the time of the observation (``karmactl.io/observed-at``). An offline run reads it as it
reads a status an online run observed, so application failover and graceful eviction can be
planned and tested without members::

    karmactl observe deploy/nginx --cluster member1 --health Unhealthy
    karmactl reconcile --offline --now 2026-01-01T00:05:01Z     # past tolerationSeconds: evicted

An online run replaces the record with what it reads from the member.

For a MultiClusterService, ``--endpointslices FILE`` records the EndpointSlices a provider cluster
reports for its Service, as an online run collects them (``multicluster_service.collect``): the
next offline run dispatches them to the consumers' execution namespaces::

    karmactl observe mcs/web --cluster member1 --endpointslices slices.yaml
"""
from __future__ import annotations

from typing import Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out

HEALTH_VALUES = ("Healthy", "Unhealthy", "Unknown")


def register(app: typer.Typer) -> None:
    """Add ``observe`` to the app."""

    @app.command()
    def observe(ctx: typer.Context,
                target: str = typer.Argument(..., metavar="KIND/NAME", help="The resource template, e.g. deploy/nginx."),
                cluster: str = typer.Option(..., "--cluster", help="The member cluster that reports it."),
                health: Optional[str] = typer.Option(None, "--health", help="Healthy, Unhealthy or Unknown "
                                                     "(default: interpreted from --status-file)."),
                status_file: Optional[str] = typer.Option(None, "--status-file",
                                                          help="YAML/JSON: the member object's status, or the whole object."),
                endpointslices: Optional[str] = typer.Option(
                    None, "--endpointslices", help="YAML/JSON: the EndpointSlices the cluster reports for the "
                    "Service of a MultiClusterService (KIND/NAME mcs/NAME); replaces what was recorded."),
                namespace: str = typer.Option("default", "-n", "--namespace")):
        """Record what a member reports about one workload (its status and health), for offline runs."""
        if endpointslices is not None:
            if health is not None or status_file is not None:
                raise CLIError("--endpointslices records a MultiClusterService's EndpointSlices: "
                               "give it without --health and --status-file")
            observe_endpointslices_cmd(ctx.obj, target, cluster, endpointslices, namespace)
            return
        observe_cmd(ctx.obj, target, cluster, health, status_file, namespace)


def _read_status(path: str) -> dict:
    """The ``status`` in a YAML/JSON file: the file's ``status`` when it holds a whole object, else the file."""
    from karmactl.store.state import InputError
    from karmactl.store.state import parse_documents

    try:
        text = open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file: {exc}", path) from None
    docs = [d for d, _i, _line in parse_documents(text, path)]
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise InputError("expected one YAML/JSON mapping: the member object's status, or the object", path)
    doc = docs[0]
    status = doc.get("status") if "kind" in doc or "status" in doc else doc
    if not isinstance(status, dict):
        raise InputError("must be a mapping", path, None, None, "status")
    return status


def observe_cmd(c: Context, target: str, cluster: str, health: str | None, status_file: str | None,
                namespace: str) -> None:
    """Write the observation into the Work of ``target`` in ``karmada-es-<cluster>``.

    Raises:
        CLIError: a bad argument (exit 2); no such template, or it has no Work on that cluster
            (exit 1, naming ``get works`` to see where it is placed).
        InputError: an unreadable or malformed ``--status-file``.
    """
    from karmactl import interpreter
    from karmactl.cli.stores import load_snapshot, store_of
    from karmactl.cli.objects import find, not_found, resolve_kind
    from karmactl.controllers import execution as X
    from karmactl.controllers import work_status
    from karmactl.api.names import execution_namespace, work_name
    from karmactl.store.fsio import state_lock, write_atomic
    from karmactl.store.state import dump_computed

    if "/" not in target:
        raise CLIError(f'invalid resource "{target}": expected KIND/NAME, e.g. deploy/nginx')
    if health is not None and health not in HEALTH_VALUES:
        raise CLIError(f'invalid --health "{health}": must be one of {", ".join(HEALTH_VALUES)}')
    if health is None and status_file is None:
        raise CLIError("give --health, --status-file or both")
    kind_name, name = target.split("/", 1)
    status = _read_status(status_file) if status_file else None
    store = store_of(c)
    with state_lock(store.root):
        snap = load_snapshot(c)
        info = resolve_kind(snap, kind_name)
        template = find(snap, info, name, namespace)
        if template is None:
            raise not_found(info, name)
        ns = (template["metadata"].get("namespace") or "") if info.namespaced else ""
        wkey = ("work.karmada.io", "Work", execution_namespace(cluster), work_name(ns, name, info.kind))
        work = snap.works.get(wkey)
        manifest = X.manifest_of(work) if work is not None else None
        if manifest is None or X.is_terminating(work):
            raise CLIError(f"{info.kind.lower()}/{name} has no Work on cluster {cluster} "
                           f"(see `karmactl get works -A` for where it is placed)", ExitCode.NOT_FOUND)
        # the member's copy as reported: the Work's manifest with the given status, at the
        # generation the status says its controller has seen (a file cannot say more)
        metadata = dict(manifest.get("metadata") or {})
        metadata["generation"] = (status or {}).get("observedGeneration") or 1
        member_obj = dict(manifest, metadata=metadata, status=status or {})
        interp = interpreter.Interpreter.for_snapshot(snap, c.now)
        entry = work_status.manifest_status(manifest, member_obj, interp)
        for line in interp.failures:  # a customization's script failed: health Unknown, said why
            err(f"warning: {line}")
        if status is None:
            entry.pop("status", None)
        if health is not None:
            entry["health"] = health
        # a member that reports the object has it: the Work is applied there
        new = X.with_applied(work, 1, 1, [], c.now)
        new = work_status.with_observation(new, entry, c.now)
        if new is not work:
            write_atomic(store.computed_path(wkey), dump_computed(new))
    what = f"health {entry['health']}" + (", status recorded" if status is not None else "")
    out(f"{info.singular}{'.' + info.group if info.group else ''}/{name} observed on {cluster}: {what}"
        + ("" if new is not work else " (unchanged)"))


def _read_endpointslices(path: str, namespace: str, service: str) -> list[dict]:
    """The EndpointSlices of a YAML/JSON file (documents or a List), each of the Service's namespace
    and labelled ``kubernetes.io/service-name: <service>``.

    Raises:
        InputError: unreadable, not EndpointSlices, or of another Service (names the document).
    """
    from karmactl.controllers import multicluster_service as mcs
    from karmactl.store.state import InputError, parse_documents

    try:
        text = open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file: {exc}", path) from None
    slices = []
    for item, _index, line in parse_documents(text, path):  # a List's items come one by one
        if (item.get("apiVersion"), item.get("kind")) != (mcs.EPS_API, mcs.EPS_KIND):
            raise InputError(f"expected {mcs.EPS_API} EndpointSlices, not {item.get('kind')}", path, line)
        md = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
        label = f"EndpointSlice {md.get('namespace') or namespace}/{md.get('name')}"
        if not isinstance(md.get("name"), str) or not md["name"]:
            raise InputError("an EndpointSlice needs a name", path, line, label, "metadata.name")
        if (md.get("namespace") or namespace) != namespace:
            raise InputError(f"must be in the Service's namespace {namespace}", path, line, label,
                             "metadata.namespace")
        if (md.get("labels") or {}).get(mcs.SERVICE_NAME_LABEL) != service:
            raise InputError(f"must carry the label {mcs.SERVICE_NAME_LABEL}: {service}", path, line, label,
                             "metadata.labels")
        slices.append(dict(item, metadata=dict(md, namespace=namespace)))
    return slices


def observe_endpointslices_cmd(c: Context, target: str, cluster: str, path: str, namespace: str) -> None:
    """Record the EndpointSlices provider ``cluster`` reports for MultiClusterService ``target``:
    its collected EndpointSlice Works are replaced by those of the file.

    Raises:
        CLIError: the target is not a MultiClusterService (exit 2), or does not exist or has no
            Work on that cluster (not one of its Ready providers; exit 1).
        InputError: an unreadable or malformed file.
    """
    from karmactl.cli.stores import load_snapshot, store_of
    from karmactl.cli.objects import find, not_found, resolve_kind
    from karmactl.controllers import multicluster_service as mcs
    from karmactl.api.names import execution_namespace, work_name
    from karmactl.store.fsio import state_lock

    if "/" not in target:
        raise CLIError(f'invalid resource "{target}": expected mcs/NAME')
    kind_name, name = target.split("/", 1)
    store = store_of(c)
    with state_lock(store.root):
        snap = load_snapshot(c)
        info = resolve_kind(snap, kind_name)
        if (info.group, info.kind) != (mcs.GROUP, mcs.KIND):
            raise CLIError(f"--endpointslices records a MultiClusterService's EndpointSlices, not a {info.kind}'s")
        obj = find(snap, info, name, namespace)
        if obj is None:
            raise not_found(info, name)
        slices = _read_endpointslices(path, namespace, name)
        space = execution_namespace(cluster)
        marker = ("work.karmada.io", "Work", space, work_name(namespace, name, mcs.KIND))
        if marker not in snap.works:
            raise CLIError(f"multiclusterservice/{name} has no Work on cluster {cluster}: it is not one of its "
                           f"Ready providers (see `karmactl get works -n {space}`)", ExitCode.NOT_FOUND)
        works = {k: w for k, w in snap.works.items() if k[2] == space and (k == marker or (
            mcs.is_collected_work(w) and (w["metadata"]["labels"].get(mcs.NAMESPACE_LABEL),
                                          w["metadata"]["labels"].get(mcs.NAME_LABEL)) == (namespace, name)))}
        after = snap.copy_computed()
        for wkey, work in mcs.collect(cluster, works, slices, c.now).items():
            after.set_work(wkey, work)
        changes = store.write_changes(snap, after)
    out(f"multiclusterservice.{mcs.GROUP}/{name} observed on {cluster}: {len(slices)} EndpointSlice(s) recorded"
        + ("" if changes else " (unchanged)"))


__all__ = ["observe_cmd", "observe_endpointslices_cmd", "register"]
