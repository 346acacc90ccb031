"""Reaching into member clusters with the real ``kubectl``: ``logs``, ``exec`` and ``attach``
(karmadactl's ``pkg/karmadactl/{logs,exec,attach}``, which run kubectl's own code against a member's
client factory; karmactl runs kubectl itself with the member's kubeconfig).

Which members: the ``-C/--cluster`` list (every name a registered Cluster, else karmadactl's
``clusters don't exist: ...``), or for a template named ``TYPE/NAME`` without ``-C`` the clusters its
ResourceBinding was scheduled to (``spec.clusters``). Several members print their lines prefixed
``[<cluster>] ``, as ``kubectl logs -l --prefix`` prefixes pods.

How: the Cluster's kubeconfig and context are resolved as a run resolves them
(:func:`karmactl.members.kubeconfig.resolve_access`: the annotation confined to the kubeconfig
directory, or ``KUBECONFIG``/``~/.kube/config``), checked as a run checks them (exec plugins and
auth-providers only with ``--allow-exec-plugins``, named files inside the kubeconfig directory:
:func:`~karmactl.members.kubeconfig.check_access`), and given to kubectl as ``KUBECONFIG=<files>`` and
``--context``: no credential is on its command line, and what karmactl relays is redacted.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass

from karmactl.cli.context import CLIError, Context, ExitCode, err, out

# kubectl flags that would choose another cluster, user or kubeconfig than the member's own
_CONNECTION_FLAGS = ("--kubeconfig", "--context", "--server", "-s", "--token", "--user", "--username", "--password",
                     "--as", "--as-group", "--as-uid", "--certificate-authority", "--client-certificate",
                     "--client-key", "--insecure-skip-tls-verify", "--tls-server-name")


@dataclass(frozen=True)
class MemberTarget:
    """One member a command runs against: its name and how kubectl reaches it.

    Attributes:
        cluster: the Cluster's name.
        env: the environment kubectl runs with (``KUBECONFIG`` = the member's kubeconfig files).
        context: the kubeconfig context (kubectl's ``--context``).
    """

    cluster: str
    env: dict
    context: str


def kubectl_binary() -> str:
    """The ``kubectl`` on PATH.

    Raises:
        CLIError: none there (exit 6: the environment lacks it).
    """
    found = shutil.which("kubectl")
    if not found:
        raise CLIError("kubectl not found on PATH: karmactl runs the real kubectl against the member "
                       "(install kubectl)", ExitCode.ENVIRONMENT)
    return found


def check_kubectl_args(args: list[str]) -> None:
    """Refuse kubectl flags that would reach another cluster than the member's (its kubeconfig and
    context are karmactl's to give).

    Raises:
        CLIError: naming the flag (exit 2).
    """
    for a in args:
        if a == "--":
            return
        name = a.split("=", 1)[0]
        if name in _CONNECTION_FLAGS:
            raise CLIError(f"{name} cannot be used here: karmactl reaches the member with the kubeconfig and "
                           f"context its Cluster names (choose the member with -C/--cluster)")


def check_scope(scope: str | None) -> None:
    """karmadactl's ``-s/--operation-scope`` of ``exec``/``attach``: ``members`` (or none); ``karmada``
    has no Pods in karmactl.

    Raises:
        CLIError: any other scope (exit 2).
    """
    if scope not in (None, "members", "karmada"):
        raise CLIError(f'operation scope "{scope}" is not supported; the optional values are karmada and members')
    if scope == "karmada":
        raise CLIError("karmactl's control plane runs no Pods: use --operation-scope members with --cluster "
                       "(or -C/--cluster alone)")


def session_options() -> dict:
    """The typer options ``exec`` and ``attach`` share (karmadactl's and kubectl's flags), by parameter name."""
    import typer

    return {
        "clusters": typer.Option([], "-C", "--cluster", help="Member cluster(s); default: where the template's "
                                                             "binding placed it."),
        "scope": typer.Option(None, "-s", "--operation-scope", help="karmadactl's scope: members (the only one with Pods)."),
        "namespace": typer.Option("default", "-n", "--namespace"),
        "container": typer.Option(None, "-c", "--container", help="Container name."),
        "stdin": typer.Option(False, "-i", "--stdin", help="Pass stdin to the container."),
        "tty": typer.Option(False, "-t", "--tty", help="Stdin is a TTY."),
        "quiet": typer.Option(False, "-q", "--quiet", help="Only print output from the remote session."),
        "pod_running_timeout": typer.Option(None, "--pod-running-timeout", help="Wait this long for a Pod to run."),
    }


def session_flags(namespace: str, container: str | None, stdin: bool, tty: bool, quiet: bool,
                  pod_running_timeout: str | None) -> list[str]:
    """kubectl exec/attach's own flags, as given, for the kubectl command line."""
    flags = [f"--namespace={namespace}"] + ([f"--container={container}"] if container else [])
    flags += [f for on, f in ((stdin, "--stdin"), (tty, "--tty"), (quiet, "--quiet")) if on]
    return flags + ([f"--pod-running-timeout={pod_running_timeout}"] if pod_running_timeout else [])


def run_session(c: Context, target: str, clusters: list[str] | None, namespace: str, verb: str, argv: list[str],
                interactive: bool) -> None:
    """``exec``/``attach``: kubectl ``argv`` on the members of ``target``; ``-i``/``-t`` (``interactive``)
    need one.

    Raises:
        CLIError: ``-i``/``-t`` with several members, and :func:`resolve_members`' errors (exit 2).
        SystemExit: kubectl's exit code (one member), 3 when it failed on any of several.
    """
    snap, names = resolve_members(c, target, clusters, namespace, verb)
    if interactive and len(names) > 1:
        raise CLIError(f"-i/-t need one member, and {target} runs on {', '.join(names)}: choose one with -C")
    code = run_kubectl(targets_for(c, snap, names), argv, interactive=interactive)
    if code:
        raise SystemExit(code)


def registered_clusters(snap) -> dict[str, dict]:
    """``{name: Cluster}`` of the state directory (user objects)."""
    return {k[3]: v for k, v in snap.user.items() if k[:2] == ("cluster.karmada.io", "Cluster")}


def named_clusters(snap, names: list[str]) -> list[str]:
    """``names`` (``-C a,b`` split), each checked to be a registered Cluster.

    Raises:
        CLIError: karmadactl's ``clusters don't exist: a,b`` (exit 2).
    """
    known = registered_clusters(snap)
    missing = [n for n in names if n not in known]
    if missing:
        raise CLIError(f"clusters don't exist: {','.join(missing)}")
    return names


def split_clusters(values: list[str] | None) -> list[str]:
    """``-C a,b -C c`` -> ``[a, b, c]`` (order kept, no repeats)."""
    names: list[str] = []
    for v in values or []:
        for n in v.split(","):
            n = n.strip()
            if n and n not in names:
                names.append(n)
    return names


def placed_clusters(snap, info, name: str, namespace: str) -> list[str]:
    """The clusters the ResourceBinding of template ``info``/``name`` was scheduled to
    (``spec.clusters``, in order), as ``rollout status`` and ``fleet`` read them.

    Raises:
        CLIError: no such template (exit 1); no binding (no policy selects it, or no run since), or
            a binding scheduled to no cluster (exit 2), each saying what to do.
    """
    from karmactl.api.names import binding_name
    from karmactl.cli.objects import find, not_found
    from karmactl.cli.printers import kind_prefix

    if find(snap, info, name, namespace) is None:
        raise not_found(info, name)
    ns = namespace if info.namespaced else ""
    bkind = "ResourceBinding" if info.namespaced else "ClusterResourceBinding"
    binding = snap.bindings.get(("work.karmada.io", bkind, ns, binding_name(name, info.kind)))
    what = f"{kind_prefix(info)}/{name}"
    if binding is None:
        raise CLIError(f"{what} has no {bkind} (no PropagationPolicy selects it, or no reconcile since it was "
                       f"applied): name a member with -C/--cluster")
    clusters = [t.get("name") for t in (binding.get("spec") or {}).get("clusters") or [] if t.get("name")]
    if not clusters:
        raise CLIError(f"{what} is not scheduled to any cluster yet ({bkind} {binding['metadata']['name']} has "
                       f"no spec.clusters): name a member with -C/--cluster")
    return clusters


def member_target(c: Context, cluster: dict) -> MemberTarget:
    """How kubectl reaches ``cluster`` (see the module docstring).

    Raises:
        CLIError: the kubeconfig is missing, refused or malformed (exit 3, naming the Cluster).
    """
    from karmactl.members.kubeconfig import check_access, redact, resolve_access

    name = cluster["metadata"]["name"]
    try:
        access = resolve_access(cluster, c.state)
        check_access(access)
    except Exception as exc:  # noqa: BLE001 - AccessError and the config loader's errors alike
        raise CLIError(f"cluster({name}): {redact(str(exc))}", ExitCode.MEMBER_FAILURE) from None
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["KUBECONFIG"] = os.pathsep.join(os.path.abspath(p) for p in access.paths)
    return MemberTarget(name, env, access.context)


def targets_for(c: Context, snap, names: list[str]) -> list[MemberTarget]:
    """The :class:`MemberTarget` of each named (registered) cluster, in order."""
    known = registered_clusters(snap)
    return [member_target(c, known[n]) for n in names]


def run_kubectl(targets: list[MemberTarget], argv: list[str], interactive: bool = False) -> int:
    """Run ``kubectl --context <ctx> <argv...>`` on each target; returns the exit code.

    With one target kubectl's own exit code is returned; ``interactive`` (``-i``/``-t``) gives kubectl
    this process's terminal (one target only). Otherwise its output is relayed line by line (stdout
    to stdout, stderr to stderr, credentials redacted), prefixed ``[<cluster>] `` when there are
    several targets, all targets at once (``-f`` follows every member); any failing gives exit 3.
    """
    binary = kubectl_binary()
    if interactive:
        t = targets[0]
        return subprocess.call([binary, "--context", t.context, *argv], env=t.env)
    prefix = len(targets) > 1
    procs = [(t, subprocess.Popen([binary, "--context", t.context, *argv], env=t.env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace"))
             for t in targets]
    lock = threading.Lock()
    threads = []
    for t, proc in procs:
        for stream, sink in ((proc.stdout, out), (proc.stderr, err)):
            th = threading.Thread(target=_relay, args=(stream, sink, f"[{t.cluster}] " if prefix else "", lock),
                                  daemon=True)
            th.start()
            threads.append(th)
    codes = [proc.wait() for _t, proc in procs]
    for th in threads:
        th.join()
    if len(codes) == 1:
        return codes[0]
    return int(ExitCode.MEMBER_FAILURE) if any(codes) else 0


def _relay(stream, sink, prefix: str, lock: threading.Lock) -> None:
    for line in stream:
        with lock:
            sink(prefix + line.rstrip("\n"))
            (sys.stdout if sink is out else sys.stderr).flush()
    stream.close()


def _template_ref(registry, target: str | None):
    """``(KindInfo, name)`` of ``TYPE/NAME`` naming a kind other than Pod, else None.

    Raises:
        CLIError: an unknown TYPE (exit 2).
    """
    from karmactl.cli.objects import resolve_kind

    if not target or "/" not in target:
        return None
    kind, name = target.split("/", 1)
    info = resolve_kind(registry, kind)
    return None if (info.group, info.kind) == ("", "Pod") else (info, name)


def load_for_members(c: Context, ref, namespace: str):
    """The snapshot pass-through commands read: the Clusters, and a template's object and binding
    (``ref`` = ``(KindInfo, name)`` or None), from the parse cache when it is fresh."""
    from karmactl.api.names import binding_name
    from karmactl.cli.stores import load_for_reading

    def kinds_of(_registry):
        wanted = [("cluster.karmada.io", "Cluster")]
        if ref is not None:
            info, name = ref
            ns = namespace if info.namespaced else ""
            bkind = "ResourceBinding" if info.namespaced else "ClusterResourceBinding"
            wanted += [(info.group, info.kind, ns, name), ("work.karmada.io", bkind, ns, binding_name(name, info.kind))]
        return wanted

    return load_for_reading(c, kinds_of)


def resolve_members(c: Context, target: str | None, clusters: list[str] | None, namespace: str, verb: str):
    """``(snapshot, cluster names)`` a pass-through command runs on: ``-C`` (checked), else the
    clusters a template named ``TYPE/NAME`` was placed on.

    Raises:
        CLIError: ``must specify a cluster`` (a Pod, a selector, nothing placed), unknown clusters,
            TYPE, template or binding (exit 2; 1 for a template not found).
    """
    from karmactl.cli.stores import registry_of

    names = split_clusters(clusters)
    ref = None if names else _template_ref(registry_of(c), target)
    snap = load_for_members(c, ref, namespace)
    if names:
        return snap, named_clusters(snap, names)
    if ref is None:
        raise CLIError(f"must specify a cluster: {verb} reaches into a member (-C/--cluster), or name a template "
                       f"as TYPE/NAME to use the clusters its binding placed it on")
    return snap, placed_clusters(snap, ref[0], ref[1], namespace)
