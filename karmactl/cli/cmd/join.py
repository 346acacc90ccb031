"""Member-cluster commands: ``join``, ``unjoin``, ``local-up``, ``local-down`` and ``demo``.

``join``/``unjoin`` follow karmadactl (``pkg/karmadactl/join/join.go``, ``unjoin/unjoin.go``,
``pkg/karmadactl/util/cluster.go``; semantics §11.2): a Push Cluster is registered under its name
with the member's API endpoint, provider, region and zones. karmactl keeps no credentials: the
Cluster names the kubeconfig and context it is reached with in the annotations
``karmactl.io/kubeconfig`` and ``karmactl.io/context`` (DESIGN §4).

``local-up``/``local-down`` start and stop local members (emulators, or real kube-apiservers with
``--kube-apiserver PATH``) through :mod:`karmactl.emulator.local`, which supervises the processes;
this module only parses, joins the members and prints. ``demo`` is the whole tour in one command.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.store.fsio import ensure_runtime_dir

CLUSTER_KEY = ("cluster.karmada.io", "Cluster", "")


def _now(c: Context) -> str:
    """The clock for a run: ``--now`` when given, else the wall clock read now."""
    if c.now_text:
        return c.now
    from datetime import datetime, timezone
    from karmactl.api.objects import format_time
    return format_time(datetime.now(timezone.utc))


def _store(c: Context):
    from karmactl.store.state import StateStore
    return StateStore(c.state)


# ============================================================================ join
def _annotation_path(kubeconfig: Path, state: Path) -> str:
    """The kubeconfig as recorded on the Cluster (``karmactl.io/kubeconfig``, committed to git with
    the state directory): relative to the state directory when inside it, ``~/...`` when under the
    home directory (expanded again when read), else absolute."""
    k, s = kubeconfig.resolve(), state.resolve()
    try:
        return str(k.relative_to(s))
    except ValueError:
        pass
    try:
        return str(Path("~") / k.relative_to(Path(os.path.expanduser("~")).resolve()))
    except ValueError:
        return str(k)


def _check_in_kubeconfig_dir(kubeconfig: Path, state: Path, name: str) -> None:
    """Refuse to record a kubeconfig that online runs would refuse: one outside the kubeconfig
    directory (``--kubeconfig-dir``, default ``<state>/.karmactl``; ``karmactl.members.kubeconfig``).

    Raises:
        CLIError: exit 2, saying where to copy the file or which flag names its directory.
    """
    from karmactl.members.kubeconfig import KUBECONFIG_DIR_ENV, current_policy, inside

    directory = current_policy().directory(state)
    real = os.path.realpath(kubeconfig)
    if not inside(real, directory):
        raise CLIError(f"kubeconfig {kubeconfig} is outside the kubeconfig directory {directory}, and runs read member "
                       f"kubeconfigs only inside it: copy it to {os.path.join(directory, 'kubeconfigs', name)} "
                       f"(a state directory's .karmactl/ is ignored by git), or name a directory holding it with "
                       f"--kubeconfig-dir or {KUBECONFIG_DIR_ENV} (for this command and every run)")


def _default_kubeconfig() -> str:
    env = os.environ.get("KUBECONFIG", "")
    first = next((e for e in env.split(os.pathsep) if e), "")
    return first or os.path.expanduser("~/.kube/config")


def probe_member(kubeconfig: str, context: str, timeout: float = 5.0, state: Path = Path(".")) -> dict:
    """Contact a member once: ``{"gitVersion", "id"}`` (``id`` = the kube-system namespace UID, as
    Karmada's ``ObtainClusterID``; None when the member does not serve it). The client is the member
    layer's (:class:`karmactl.cli.members_view.MemberReader`), under the same credential policy as a
    run's (``state``: the state directory, whose ``.karmactl`` is the default kubeconfig directory).

    Raises:
        CLIError: exit 2 when the kubeconfig cannot be used by the client; exit 3 when the member
            does not answer or answers ``/version`` with an error.
    """
    from karmactl.cli.members_view import MemberAccessError, MemberReader

    cluster = {"metadata": {"name": context, "annotations": {"karmactl.io/kubeconfig": str(Path(kubeconfig).resolve()),
                                                             "karmactl.io/context": context}}}
    try:
        reader = MemberReader(cluster, state, timeout)
    except MemberAccessError as exc:
        raise CLIError(f"failed to get joining cluster config. error: {exc}") from None
    try:
        try:
            version = reader.get("/version")
        except MemberAccessError as exc:
            raise CLIError(f"failed to connect to the joining cluster: {exc}", ExitCode.MEMBER_FAILURE) from None
        try:
            uid = reader.get("/api/v1/namespaces/kube-system")["metadata"].get("uid")
        except (MemberAccessError, KeyError, TypeError):
            uid = None
        return {"gitVersion": version.get("gitVersion"), "id": uid}
    finally:
        reader.close()


def build_cluster(name: str, server: str, kubeconfig_annotation: str, context: str, provider: str | None,
                  region: str | None, zones: list[str], cluster_id: str | None) -> dict:
    """The Cluster object ``join`` writes (karmadactl's ``generateClusterInControllerPlane`` without
    secretRef: the annotations name the kubeconfig instead)."""
    spec: dict = {"syncMode": "Push", "apiEndpoint": server}
    if cluster_id:
        spec["id"] = cluster_id
    if provider:
        spec["provider"] = provider
    if region:
        spec["region"] = region
    if zones:
        spec["zones"] = list(zones)
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name, "annotations": {"karmactl.io/kubeconfig": kubeconfig_annotation,
                                                      "karmactl.io/context": context}},
            "spec": spec}


def join_cluster(c: Context, name: str, kubeconfig: str | None, context: str | None = None,
                 provider: str | None = None, region: str | None = None, zones: list[str] | None = None,
                 dry_run: bool = False, quiet: bool = False) -> dict:
    """Register a Push member: write ``clusters/<name>.yaml`` in the state directory.

    The member is contacted once (``/version``, and the kube-system UID as ``spec.id``) before
    anything is written; its status (version, conditions) is left to the next reconcile's probe.

    Returns:
        The Cluster object written (or that would be written with ``dry_run``).

    Raises:
        CLIError: exit 2: invalid name (``invalid cluster name(<n>): ...``), unusable kubeconfig or
            context, ``cluster(<n>) already exist``, ``the cluster ID <id> or the cluster name <n>
            has been registered`` (karmadactl's wording); exit 3: the member cannot be reached.
        InputError: the state directory is invalid.
    """
    from karmactl.api.validation_rules import cluster_name_errors
    from karmactl.reconcile import load, normalize_object
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import Source
    from karmactl.cli.members_view import read_kubeconfig

    errs = cluster_name_errors(name)
    if errs:
        raise CLIError(f"invalid cluster name({name}): {';'.join(errs)}")
    path = Path(os.path.expanduser(kubeconfig or _default_kubeconfig()))
    try:
        server, ctx_name, _cfg = read_kubeconfig(str(path), context)
    except CLIError as exc:
        raise CLIError(f"failed to get joining cluster config. error: {exc}") from None
    store = _store(c)
    _check_in_kubeconfig_dir(path, store.root, name)
    lock = state_lock(store.root) if not dry_run else _Null()
    with lock:
        snap = load(store)
        key = CLUSTER_KEY + (name,)
        if key in snap.user:
            raise CLIError(f"cluster({name}) already exist")
        info = probe_member(str(path), ctx_name, state=store.root)
        for other in snap.of_kind("cluster.karmada.io", "Cluster"):
            if info["id"] and (other.get("spec") or {}).get("id") == info["id"]:
                raise CLIError(f"the cluster ID {info['id']} or the cluster name {name} has been registered "
                               f"(as cluster({other['metadata']['name']}))")
        recorded = _annotation_path(path, store.root)
        if os.path.isabs(recorded) and not quiet:
            err(f"warning: the Cluster records the absolute kubeconfig path {recorded}, which only this machine "
                f"has and which enters git with the state directory; keep the kubeconfig inside the state directory "
                f"(its .karmactl/ is ignored by git) to record a portable path")
        obj = build_cluster(name, server, recorded, ctx_name, provider, region,
                            list(zones or []), info["id"])
        from karmactl.api.objects import deepcopy
        normalize_object(deepcopy(obj), Source(f"clusters/{name}.yaml", 0, 1), store.registry)
        if dry_run:
            from karmactl.store import yamlio
            out(yamlio.dump(obj))
            return obj
        edit.append_new(store, store.registry.by_group_kind("cluster.karmada.io", "Cluster"), obj)
    if not quiet:
        out(f"cluster({name}) is joined successfully")
    return obj


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


# ============================================================================ unjoin
def _execution_works(snap, name: str) -> list:
    from karmactl.controllers.names import execution_namespace
    ns = execution_namespace(name)
    return sorted(k for k in snap.works if k[2] == ns)


def _members_layer(c: Context):
    try:
        from karmactl.members.layer import MemberLayer
    except ModuleNotFoundError:
        raise CLIError("member support is not installed (karmactl.members.layer)", ExitCode.MEMBER_FAILURE) from None
    return MemberLayer.from_context(c)


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
    from karmactl.reconcile import UnjoinError, load, unjoin
    from karmactl.store.fsio import state_lock

    store = _store(c)
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
            dropped, report = unjoin(store, name, _members_layer(c), lambda: _now(c), wait, force, waiting)
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


# ============================================================================ local-up / local-down
def local_up(c: Context, count: int = 3, port_base: int | None = None, nodes: int | None = None,
             kube_apiserver: str | None = None) -> list[dict]:
    """Start (or reuse) ``member1..N`` and join them.

    The processes are :func:`karmactl.emulator.local.local_up`'s (emulators, or real kube-apiservers
    on etcd with ``kube_apiserver``). A member already joined keeps its Cluster file, whose
    ``spec.apiEndpoint`` is updated when its URL changed.

    Returns:
        ``[{"name", "kind", "url", "port", "pid", "kubeconfig", "reused"}]``.

    Raises:
        CLIError: exit 2 for a bad count, a taken ``--port-base`` port, an unusable kube-apiserver
            binary or no etcd; exit 3 when a member does not start.
    """
    from karmactl.emulator import local

    ensure_runtime_dir(c.state)
    try:
        members = local.local_up(c.state, count, port_base, local.NODE_COUNT if nodes is None else nodes,
                                 kube_apiserver, notify=err)
    except local.LocalUsageError as exc:
        raise CLIError(str(exc)) from None
    except local.MemberStartError as exc:
        raise CLIError(str(exc), ExitCode.MEMBER_FAILURE) from None
    _join_local(c, {m["name"]: m for m in members})
    return members


def _join_local(c: Context, members: dict[str, dict]) -> None:
    """Join every local member not joined yet; refresh ``apiEndpoint`` of those already joined."""
    from karmactl.emulator.local import member_order, members_root
    from karmactl.reconcile import load
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock

    store = _store(c)
    snap = load(store)
    for name in sorted(members, key=member_order):
        key = CLUSTER_KEY + (name,)
        url = members[name]["url"]
        if key not in snap.user:
            join_cluster(c, name, str(members_root(c.state) / name / "kubeconfig"), name)
            continue
        existing = snap.user[key]
        if (existing.get("spec") or {}).get("apiEndpoint") != url:
            with state_lock(store.root):
                src = edit.index_user_objects(store)[key]
                docs = store.read_documents(store.root / src.path, src.path)
                obj = next(o for o, i, _line in docs if i == src.index)
                obj.setdefault("spec", {})["apiEndpoint"] = url
                edit.replace_object(store, src, obj)
            err(f"cluster({name}): apiEndpoint updated to {url}")


def local_down(c: Context, purge: bool = False) -> list[str]:
    """Stop every local member (:func:`karmactl.emulator.local.local_down`); data kept unless ``purge``.

    Returns the names of the members that were running.

    Raises:
        RuntimeDirError: ``.karmactl`` is a symlink or tracked by git (its members' pid files and,
            with ``purge``, their directories are never taken from the repository).
    """
    from karmactl.emulator import local
    from karmactl.store.fsio import check_runtime_dir

    check_runtime_dir(c.state)
    return local.local_down(c.state, purge)


# ============================================================================ demo
def _default_manifests() -> Path:
    here = Path("manifests") / "nginx"
    if here.is_dir():
        return here
    repo = Path(__file__).resolve().parents[2] / "manifests" / "nginx"
    if repo.is_dir():
        return repo
    raise CLIError("no sample manifests found (looked for ./manifests/nginx and the karmactl source tree); pass --manifests DIR")


def demo(c: Context, manifests: Path | None = None, count: int = 3, timeout: float = 60.0,
         kube_apiserver: str | None = None) -> None:
    """local-up (emulators, or real kube-apiservers with ``kube_apiserver``), apply the sample,
    reconcile until converged, then show clusters, bindings, Works, the member copies and the
    kubectl command to look at member2 directly."""
    from karmactl.cli.commands import GetOptions, apply_cmd, get_cmd, wait_converged

    manifests = manifests or _default_manifests()
    if not Path(manifests).exists():
        raise CLIError(f'the path "{manifests}" does not exist')
    err(f"== local-up: {count} member clusters" + (f" on {kube_apiserver}" if kube_apiserver else ""))
    members = local_up(c, count, kube_apiserver=kube_apiserver)
    err(f"== apply -f {manifests}")
    apply_cmd(c, [str(manifests)], True, False)
    err("== reconcile until converged")
    wait_converged(c, _members_layer(c), timeout)

    def show(title: str, kind: str, **kw):
        out(f"\n$ karmactl {title}")
        fresh = Context(state=c.state, now_text=c.now_text, verbose=c.verbose)
        sys.stdout.flush()
        get_cmd(fresh, [kind], GetOptions(ignore_not_found=True, **kw))

    show("get clusters", "clusters")
    show("get deploy", "deployments")
    show("get rb", "resourcebindings")
    show("get works -A", "works", all_namespaces=True)
    show("get deploy -s members", "deployments", scope="members")
    kubeconfig = next((m["kubeconfig"] for m in members if m["name"] == "member2"), members[-1]["kubeconfig"])
    out("\nLook at a member with kubectl:")
    out(f"  kubectl --kubeconfig {kubeconfig} get deploy nginx -n default")
    out("Stop the members with: karmactl local-down" + (f" --state {c.state}" if str(c.state) != "state" else ""))


# ============================================================================ registration
def register(app: typer.Typer) -> None:
    """Add join, unjoin, local-up, local-down and demo to the karmactl app."""

    def ctx_of(ctx: typer.Context) -> Context:
        return ctx.obj

    KUBE_APISERVER_OPTION = typer.Option(
        None, "--kube-apiserver", envvar="KARMACTL_KUBE_APISERVER", metavar="PATH",
        help="Run each member on this real kube-apiserver binary (with etcd from PATH or /usr/bin/etcd and a "
             "status writer standing in for controllers) instead of the emulator.")

    @app.command(rich_help_panel="Cluster registration")
    def join(ctx: typer.Context,
             name: str = typer.Argument(..., metavar="CLUSTER_NAME", help="Name of the member cluster."),
             kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", "--cluster-kubeconfig",
                                                      help="Path of the member's kubeconfig (default $KUBECONFIG, ~/.kube/config)."),
             context: Optional[str] = typer.Option(None, "--context", "--cluster-context",
                                                   help="Context in the kubeconfig (default: its current-context)."),
             provider: Optional[str] = typer.Option(None, "--provider", "--cluster-provider", help="spec.provider"),
             region: Optional[str] = typer.Option(None, "--region", "--cluster-region", help="spec.region"),
             zones: Optional[str] = typer.Option(None, "--zones", "--cluster-zones", help="spec.zones, comma-separated"),
             dry_run: bool = typer.Option(False, "--dry-run", help="Print the Cluster, write nothing.")):
        """Register a Push member cluster: write clusters/NAME.yaml naming its kubeconfig and context."""
        zl = [z.strip() for z in (zones or "").split(",") if z.strip()]
        join_cluster(ctx_of(ctx), name, kubeconfig, context, provider, region, zl, dry_run)

    @app.command(rich_help_panel="Cluster registration")
    def unjoin(ctx: typer.Context,
               name: str = typer.Argument(..., metavar="CLUSTER_NAME"),
               force: bool = typer.Option(False, "--force", help="After --wait, remove the Cluster even if member copies remain."),
               wait: str = typer.Option("60s", "--wait", help="How long to wait for the member copies to be deleted."),
               dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be removed; contact nothing.")):
        """Remove a member: delete what was propagated to it, then its Works and its Cluster file."""
        from karmactl.cli.commands import parse_duration
        secs = parse_duration(wait)
        if secs <= 0:
            raise CLIError(f" --wait {wait}  must be a positive duration, e.g. 1m0s ")
        unjoin_cluster(ctx_of(ctx), name, force, secs, dry_run)

    @app.command("local-up", rich_help_panel="Local members")
    def local_up_command(ctx: typer.Context,
                         members: int = typer.Option(3, "--members", help="Number of members (member1..N)."),
                         port_base: Optional[int] = typer.Option(None, "--port-base", help="member<i> listens on PORT_BASE+i-1 (default: free ports)."),
                         kube_apiserver: Optional[str] = KUBE_APISERVER_OPTION):
        """Start local member clusters (emulated, or real kube-apiservers) in the background and join them."""
        c = ctx_of(ctx)
        for m in local_up(c, members, port_base, kube_apiserver=kube_apiserver):
            out(f"{m['name']}\t{m['url']}\t{m['kubeconfig']}")

    @app.command("local-down", rich_help_panel="Local members")
    def local_down_command(ctx: typer.Context,
                           purge: bool = typer.Option(False, "--purge", help="Also delete the members' data.")):
        """Stop the member clusters started by local-up."""
        stopped = local_down(ctx_of(ctx), purge)
        for name in stopped:
            out(f"{name} stopped")
        if not stopped:
            err("no local member was running")

    @app.command("demo", rich_help_panel="Local members")
    def demo_command(ctx: typer.Context,
                     manifests: Optional[Path] = typer.Option(None, "--manifests", help="Directory to apply (default manifests/nginx)."),
                     timeout: str = typer.Option("60s", "--timeout", help="How long to wait for convergence."),
                     members: int = typer.Option(3, "--members", help="Number of members (member1..N; the sample uses member1 and member2)."),
                     kube_apiserver: Optional[str] = KUBE_APISERVER_OPTION):
        """The tour: local-up, apply the nginx sample, reconcile until ready, show the results."""
        from karmactl.cli.commands import parse_duration
        demo(ctx_of(ctx), manifests, members, parse_duration(timeout), kube_apiserver)
