"""Reading objects from member clusters: ``get --operation-scope members|all [-C c1,c2]``.

Follows karmadactl's ``pkg/karmadactl/get/get.go`` (semantics §11.3): every target member (default:
every registered Cluster) is first given a basic connection test (``GET /api``); a member that fails
it yields ``basic connection test to cluster(<c>) failed, please check authorization or network: <err>``
and the others are still read. ``-C`` naming a Cluster that is not registered fails with
``clusters don't exist: a,b``. Rows carry the member's name; ``get_cmd`` inserts the CLUSTER column
and appends ADOPTION.

A member is reached with the kubeconfig and context its Cluster names in the annotations
``karmactl.io/kubeconfig`` (relative to the state directory, or absolute) and ``karmactl.io/context``
(``karmactl join`` writes them), through the member layer's client (``karmactl.members``), so
timeouts, rate limits and kubeconfig resolution are the same as in a run.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

from karmactl.cli.context import CLIError, ExitCode, err

KUBECONFIG_ANNOTATION = "karmactl.io/kubeconfig"
CONTEXT_ANNOTATION = "karmactl.io/context"
DEFAULT_TIMEOUT = 5.0


class MemberAccessError(Exception):
    """A member could not be reached or answered with an error.

    Attributes:
        status: the HTTP status (None when no answer came: connection refused, timeout, bad kubeconfig).
        reason: the Kubernetes ``Status.reason`` when the member sent one (``NotFound``...).
    """

    def __init__(self, message: str, status: int | None = None, reason: str | None = None):
        super().__init__(message)
        self.status, self.reason = status, reason


# ---------------------------------------------------------------------------- kubeconfig
def kubeconfig_of(cluster: dict, state: Path) -> tuple[str | None, str | None]:
    """``(absolute kubeconfig path or None, context or None)`` named by a Cluster's annotations.

    A relative path is relative to the state directory; without the annotation, ``$KUBECONFIG``
    (its first entry) and then ``~/.kube/config`` are used, as DESIGN §4 allows.
    """
    ann = (cluster.get("metadata") or {}).get("annotations") or {}
    path = ann.get(KUBECONFIG_ANNOTATION)
    if path:
        p = Path(os.path.expanduser(path))
        path = str(p if p.is_absolute() else (Path(state) / p))
    else:
        env = os.environ.get("KUBECONFIG", "")
        first = next((e for e in env.split(os.pathsep) if e), "")
        path = first or os.path.expanduser("~/.kube/config")
    return path, ann.get(CONTEXT_ANNOTATION) or None


def read_kubeconfig(path: str, context: str | None) -> tuple[str, str, dict]:
    """Resolve one context of a kubeconfig file: ``(server URL, context name, the parsed config)``.

    The context is ``context`` when given, else the file's ``current-context`` (resolved explicitly:
    the Python client and kubectl disagree about it with several files, member-clusters.md).

    Raises:
        CLIError: exit 2 when the file cannot be read or parsed, the context does not exist, or its
            cluster has no server (client-go's wording where it has one).
    """
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            cfg = yaml.safe_load(f) or {}
    except FileNotFoundError:
        raise CLIError(f'kubeconfig "{path}": no such file') from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CLIError(f'kubeconfig "{path}" cannot be read: {str(exc).splitlines()[0]}') from None
    if not isinstance(cfg, dict):
        raise CLIError(f'kubeconfig "{path}" is not a kubeconfig file')
    name = context or cfg.get("current-context")
    if not name:
        raise CLIError(f'kubeconfig "{path}": invalid configuration: no configuration has been provided '
                       f"(no current-context; pass --context)")
    ctx = next((c.get("context") or {} for c in cfg.get("contexts") or [] if isinstance(c, dict) and c.get("name") == name), None)
    if ctx is None:
        raise CLIError(f'kubeconfig "{path}": context "{name}" does not exist')
    cl = next((c.get("cluster") or {} for c in cfg.get("clusters") or []
               if isinstance(c, dict) and c.get("name") == ctx.get("cluster")), None)
    if cl is None or not cl.get("server"):
        raise CLIError(f'kubeconfig "{path}": context "{name}": cluster "{ctx.get("cluster")}" has no server')
    return str(cl["server"]), name, cfg


def resource_path(info, namespace: str | None, name: str | None = None) -> str:
    """REST path of a kind: ``/api/v1/...`` or ``/apis/<group>/<version>/...``, namespaced when asked."""
    base = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
    if info.namespaced and namespace:
        base += f"/namespaces/{quote(namespace)}"
    base += f"/{info.plural}"
    return base + (f"/{quote(name)}" if name else "")


# ---------------------------------------------------------------------------- get -s members
class MemberReader:
    """GETs against one member, reached as a Cluster's annotations say, through the member layer's
    ``MemberClient`` (same kubeconfig resolution, timeouts and rate limit as a run).

    Raises:
        MemberAccessError: the kubeconfig/context cannot be used (status None).
    """

    def __init__(self, cluster: dict, state: Path, timeout: float = DEFAULT_TIMEOUT):
        from karmactl.members.clients import MemberClient
        from karmactl.members.kubeconfig import resolve_access

        self.timeout = timeout
        try:
            self.client = MemberClient(resolve_access(cluster, state), timeout)
        except Exception as exc:  # noqa: BLE001 - AccessError, the config loader's many types
            raise MemberAccessError(f"failed to create a ClusterClient: {exc}") from None

    def get(self, path: str, query: dict | None = None):
        """The decoded body. Raises MemberAccessError (status None when no answer came)."""
        from karmactl.members.clients import MemberUnreachable
        try:
            status, data = self.client.request("GET", path, query=list((query or {}).items()))
        except MemberUnreachable as exc:
            raise MemberAccessError(f'Get "{self.client.server.rstrip("/")}{path}": {exc}') from None
        if 200 <= status < 300:
            return data if isinstance(data, dict) else {}
        if isinstance(data, dict) and data.get("kind") == "Status":
            raise MemberAccessError(data.get("message") or f"status {status}", status, data.get("reason"))
        raise MemberAccessError(f"the server responded with {status}: {str(data)[:200]}", status)

    def close(self) -> None:
        self.client.close()


def _read_member(cluster: dict, state: Path, info, name, namespace, all_namespaces, selector):
    """``(objects, error line or None)`` for one member."""
    from karmactl.controllers.helper.cluster import is_pull

    cname = cluster["metadata"]["name"]
    if is_pull(cluster):
        return [], f"cluster({cname}) is a Pull mode member cluster: karmactl never contacts it (its own agent does)"
    failed = f"basic connection test to cluster({cname}) failed, please check authorization or network: "
    try:
        reader = MemberReader(cluster, state)
    except MemberAccessError as exc:
        return [], failed + str(exc)
    try:
        try:
            reader.get("/api")
        except MemberAccessError as exc:
            return [], failed + str(exc)
        ns = None if (all_namespaces and not name) else namespace
        try:
            if name:
                objs = [reader.get(resource_path(info, ns, name))]
            else:
                data = reader.get(resource_path(info, ns), {"labelSelector": selector} if selector else None)
                objs = list(data.get("items") or [])
        except MemberAccessError as exc:
            if exc.status == 404 and name and exc.reason == "NotFound":
                return [], None  # absent in this member: no row (get_cmd reports NotFound when no row at all)
            if exc.status == 404:
                return [], f'cluster({cname}): the server doesn\'t have a resource type "{info.plural}"'
            return [], f"cluster({cname}): {exc}"
        for o in objs:  # list items come without kind/apiVersion
            o.setdefault("apiVersion", info.api_version)
            o.setdefault("kind", info.kind)
        objs.sort(key=lambda o: ((o.get("metadata") or {}).get("namespace") or "", (o.get("metadata") or {}).get("name") or ""))
        return objs, None
    finally:
        reader.close()


def member_rows(c, snap, info, name: str | None, namespace: str, all_namespaces: bool, selector: str | None,
                clusters: str | None) -> tuple[list[tuple], list[str]]:
    """Objects of one kind read from member clusters, for ``get -s members|all``.

    Args:
        c: the command context (its ``state`` resolves relative kubeconfig paths).
        snap: the loaded snapshot (the registered Clusters).
        info: the kind (``KindInfo``); its preferred version is the one asked of members.
        name: one object's name, or None for a list.
        namespace / all_namespaces / selector: as ``kubectl get`` (selector passed to the member).
        clusters: ``-C a,b`` or None for every registered Cluster.

    Returns:
        ``(rows, errors)``: rows ``(KindInfo, obj, cluster_name)`` sorted by cluster then namespace/name;
        errors are karmadactl's lines for members that could not be read. An object absent from a
        member when asked by name is not an error (no row). With no member Cluster at all,
        ``No member Clusters found in Karmada control plane`` goes to stderr and nothing is returned.

    Raises:
        CLIError: ``clusters don't exist: ...`` (exit 2) when ``-C`` names unregistered Clusters.
    """
    registered = {k[3]: merged for k, merged in ((k, _cluster_view(snap, k)) for k in snap.user
                                                 if k[:2] == ("cluster.karmada.io", "Cluster"))}
    if clusters:
        wanted = [x.strip() for x in clusters.split(",") if x.strip()]
        missing = [x for x in wanted if x not in registered]
        if missing:
            raise CLIError(f"clusters don't exist: {','.join(missing)}", ExitCode.INPUT_ERROR)
    else:
        wanted = sorted(registered)
    if not wanted:
        err("No member Clusters found in Karmada control plane")
        return [], []
    targets = [registered[n] for n in wanted]
    with ThreadPoolExecutor(max_workers=min(8, len(targets))) as pool:
        results = list(pool.map(lambda cl: _read_member(cl, c.state, info, name, namespace, all_namespaces, selector), targets))
    rows, errors = [], []
    for cl, (objs, error) in sorted(zip(targets, results), key=lambda t: t[0]["metadata"]["name"]):
        if error:
            errors.append(error)
        rows.extend((info, o, cl["metadata"]["name"]) for o in objs)
    return rows, errors


def _cluster_view(snap, key) -> dict:
    from karmactl.api.templates import merged_view
    return merged_view(snap.user[key], snap.overlays.get(key))
