"""Registering member clusters: a Push Cluster written for a kubeconfig (``join``), and the local
members started and joined by ``local-up`` (and ``demo``).

Follows karmadactl (``pkg/karmadactl/join/join.go``, ``pkg/karmadactl/util/cluster.go``; semantics
§11.2): a Push Cluster is registered under its name with the member's API endpoint, provider,
region and zones. karmactl keeps no credentials: the Cluster names the kubeconfig and context it is
reached with in the annotations ``karmactl.io/kubeconfig`` and ``karmactl.io/context`` (DESIGN §4).
"""
from __future__ import annotations

import os
from contextlib import nullcontext
from pathlib import Path

from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.stores import store_of
from karmactl.store.fsio import ensure_runtime_dir


CLUSTER_KEY = ("cluster.karmada.io", "Cluster", "")
KUBE_APISERVER_HELP = ("Run each member on this real kube-apiserver binary (with etcd from PATH or /usr/bin/etcd and a "
                       "status writer standing in for controllers) instead of the emulator.")


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


def _default_kubeconfig(context: str | None = None) -> str:
    """The kubeconfig ``join`` reads without ``--kubeconfig``: of the ``KUBECONFIG`` list (merged as kubectl
    merges it: the first file defining a name wins), the first file defining ``context`` (without one: the
    first setting ``current-context``); else its first file; else ``~/.kube/config``. A Cluster records one
    kubeconfig file, so the context's cluster and user must be in that file (:func:`_check_one_file`)."""
    import yaml

    listed = [e for e in os.environ.get("KUBECONFIG", "").split(os.pathsep) if e]
    for path in listed if len(listed) > 1 else []:
        try:
            with open(os.path.expanduser(path), encoding="utf-8") as f:
                cfg = yaml.safe_load(f) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue  # kubectl skips a missing file of the list; a broken one is reported if it is chosen
        if not isinstance(cfg, dict):
            continue
        if context is None and cfg.get("current-context"):
            return path
        if context is not None and any(isinstance(c, dict) and c.get("name") == context for c in cfg.get("contexts") or []):
            return path
    return (listed[0] if listed else "") or os.path.expanduser("~/.kube/config")


def _check_one_file(path: Path, cfg: dict, context: str) -> None:
    """Refuse a context whose user is defined in another file of a ``KUBECONFIG`` list: the Cluster
    records one kubeconfig.

    Raises:
        CLIError: naming the file, the context and the missing user (exit 2).
    """
    ctx = next((c.get("context") or {} for c in cfg.get("contexts") or []
                if isinstance(c, dict) and c.get("name") == context), {})
    user = ctx.get("user")
    if user and not any(isinstance(u, dict) and u.get("name") == user for u in cfg.get("users") or []):
        raise CLIError(f'kubeconfig "{path}": context "{context}" names user "{user}", which this file does not '
                       f"define; a Cluster records one kubeconfig file: write a single one with "
                       f"`kubectl config view --flatten --minify --context {context} > FILE` and join with --kubeconfig FILE")


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
    path = Path(os.path.expanduser(kubeconfig or _default_kubeconfig(context)))
    try:
        server, ctx_name, cfg = read_kubeconfig(str(path), context)
        _check_one_file(path, cfg, ctx_name)
    except CLIError as exc:
        raise CLIError(f"failed to get joining cluster config. error: {exc}") from None
    store = store_of(c)
    _check_in_kubeconfig_dir(path, store.root, name)
    lock = state_lock(store.root) if not dry_run else nullcontext()
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


KUBE_CLUSTER_HELP = ("Run each member as a whole real cluster (controllers, scheduler, nodes) started by this cluster "
                     "launcher: a directory with start.sh NAME DIR --nodes N and stop.sh DIR, such as "
                     "kube-cluster of karmactl's test tools.")


def local_up(c: Context, count: int = 3, port_base: int | None = None, nodes: int | None = None,
             kube_apiserver: str | None = None, kube_cluster: str | None = None, shape=None,
             zones: list[str] | None = None) -> list[dict]:
    """Start (or reuse) ``member1..N`` and join them.

    The processes are :func:`karmactl.emulator.local.local_up`'s (emulators, or real kube-apiservers
    on etcd with ``kube_apiserver``, or whole clusters from the launcher ``kube_cluster`` with nodes of
    ``shape`` (``launcher.NodeShape``) in ``zones``). A member already joined keeps its Cluster file, whose
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
                                 kube_apiserver, notify=err, kube_cluster=kube_cluster, shape=shape, zones=zones)
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

    store = store_of(c)
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
