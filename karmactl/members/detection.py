"""Cluster condition detection probes (I/O): ``ServiceDomainNameResolutionReady`` for Remedy.

The design document ``docs/proposals/remedy-cluster-status-based-policy.md`` ("Cluster status
detection") runs ``nslookup kubernetes.default`` inside each member (Karmada's sample agent
``pkg/servicenameresolutiondetector/coredns/detector.go``). karmactl has no agent in the members, so
one online run observes, per Cluster, one of:

(b) the operator's command, when ``data.conditionDetectionCommand`` is set in the ConfigMap
    ``karmada-system/karmactl-config`` *and* the operator allows it with
    ``KARMACTL_ALLOW_DETECTION_COMMAND=1`` (the ConfigMap sits in the state directory, which a merge
    request may write; without the variable an online run that would use the command is refused,
    exit 2, naming the ConfigMap and the key): split like a shell line (no shell is run),
    ``{cluster}`` and ``{apiEndpoint}`` substituted in every word, run with a timeout of
    ``data.conditionDetectionTimeout`` seconds (default 10). Exit 0 = success; another exit status or
    the timeout = failure; a command that cannot be started = unknown (with a warning). The last line
    of its output enters the condition message only through ``redact`` (credentials hidden);
(a) otherwise the member's DNS through its API, with the run's member client
    (:meth:`karmactl.members.layer.MemberLayer.client_for`: keys in memory, the run's timeouts): the
    Deployments in ``kube-system`` labelled ``k8s-app=kube-dns`` (CoreDNS or kube-dns), healthy when
    one has ``readyReplicas >= 1`` (or ``availableReplicas >= 1``), and the ``kube-system/kube-dns``
    Endpoints having at least one ready address. A member without such a Deployment, or one that
    cannot be reached or has no kubeconfig, is unknown: nothing is written (the Ready condition
    reports reachability).

``data.conditionDetection: "false"`` turns detection off (manual reports with ``karmactl cluster
condition set`` then stand in online runs too). Offline runs never probe.

Each observation goes through :func:`karmactl.controllers.condition_detection.apply_observation`
(the thresholds ``detectFailureThreshold`` / ``detectSuccessThreshold``, seconds) into the Cluster
overlay. Members are probed concurrently; results are applied in cluster-name order.
"""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Callable

from karmactl.api import constants as C
from karmactl.api.durations import parse_duration
from karmactl.api.snapshot import Settings, Snapshot
from karmactl.controllers import cluster_status
from karmactl.controllers.condition_detection import Observation, apply_observation

COMMAND_KEY = "conditionDetectionCommand"
TIMEOUT_KEY = "conditionDetectionTimeout"
ENABLED_KEY = "conditionDetection"
DEFAULT_TIMEOUT = 10.0
API_TIMEOUT = 5.0
DNS_NAMESPACE = "kube-system"
DNS_LABEL = "k8s-app=kube-dns"
DNS_SERVICE = "kube-dns"
PROBE_DNS = "kube-dns workload"
MAX_WORKERS = 16
ALLOW_COMMAND_ENV = "KARMACTL_ALLOW_DETECTION_COMMAND"

# client_factory(cluster: dict) -> karmactl.members.clients.MemberClient, owned by the factory's
# owner (raises when the Cluster cannot be reached by kubeconfig)
ClientFactory = Callable[[dict], object]


class DetectionConfigError(ValueError):
    """A detection setting in karmactl-config does not parse (message names the key)."""


class DetectionCommandRefused(ValueError):
    """The ConfigMap names a detection command the operator did not allow (message says how)."""


def detection_settings(settings: Settings) -> tuple[bool | str, list[str] | None, float]:
    """(enabled, command words or None, command timeout seconds) from ``settings.extra``.

    ``enabled`` is True, False or ``"auto"`` (the default: probe when a command is configured or
    when a Remedy or ClusterTaintPolicy reads the condition, see :func:`condition_consumed`; probes
    cost member requests on every run, so they run only when something uses their result).

    Raises:
        DetectionConfigError: ``conditionDetection`` not true/false, a command that does not split,
            a timeout that is not a positive number of seconds.
    """
    data = settings.extra or {}
    enabled = str(data.get(ENABLED_KEY, "auto")).strip().lower()
    if enabled not in ("true", "false", "auto"):
        raise DetectionConfigError(f'karmactl-config data.{ENABLED_KEY}: "{data[ENABLED_KEY]}" must be true, false or auto')
    command = None
    if str(data.get(COMMAND_KEY) or "").strip():
        try:
            command = shlex.split(str(data[COMMAND_KEY]))
        except ValueError as exc:
            raise DetectionConfigError(f"karmactl-config data.{COMMAND_KEY}: {exc}") from None
    timeout = DEFAULT_TIMEOUT
    if TIMEOUT_KEY in data:
        try:
            timeout = parse_duration(data[TIMEOUT_KEY])
        except ValueError as exc:
            raise DetectionConfigError(f"karmactl-config data.{TIMEOUT_KEY}: {exc}") from None
        if timeout <= 0:
            raise DetectionConfigError(f'karmactl-config data.{TIMEOUT_KEY}: "{data[TIMEOUT_KEY]}" is not a '
                                       f"positive duration")
    return {"true": True, "false": False}.get(enabled, "auto"), command, timeout


def check_command_allowed(environ=None, where: str = "") -> None:
    """Refuse ``conditionDetectionCommand`` unless the operator set ``KARMACTL_ALLOW_DETECTION_COMMAND=1``.

    The ConfigMap is in the state directory, which a merge request may write: the command it names
    runs only when the environment of the run (the operator's) says so.

    Args:
        where: ``file:line: `` of the ConfigMap, put first in the message.

    Raises:
        DetectionCommandRefused: naming the ConfigMap, the key and the variable.
    """
    from karmactl.members.kubeconfig import truthy

    env = os.environ if environ is None else environ
    if not truthy(env.get(ALLOW_COMMAND_ENV)):
        raise DetectionCommandRefused(
            f"{where}ConfigMap karmada-system/karmactl-config data.{COMMAND_KEY} names a command to run, and commands "
            f"named in the state directory run only when the operator allows them: set {ALLOW_COMMAND_ENV}=1 "
            f"in the environment of the run, or remove the key to use the built-in DNS probe")


# --------------------------------------------------------------------------- probes


def probe_command(words: list[str], cluster: dict, timeout: float) -> Observation:
    """Run the operator's command for one cluster (probe (b)); never raises."""
    name = cluster["metadata"]["name"]
    endpoint = str((cluster.get("spec") or {}).get("apiEndpoint") or "")
    argv = [w.replace("{cluster}", name).replace("{apiEndpoint}", endpoint) for w in words]
    label = f'command "{words[0]}"'
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Observation(False, label, f"timed out after {timeout:g}s")
    except OSError as exc:
        return Observation(None, label, f"cannot run: {exc.strerror or exc}")
    if proc.returncode == 0:
        return Observation(True, label)
    from karmactl.members.kubeconfig import redact

    last = next((ln.strip() for ln in reversed((proc.stderr or proc.stdout or "").splitlines()) if ln.strip()), "")
    last = redact(last)[:200]
    return Observation(False, label, f"exit status {proc.returncode}" + (f": {last}" if last else ""))


def probe_dns(client, timeout: float = API_TIMEOUT) -> Observation:
    """Check the member's DNS workload and the kube-dns Endpoints through its API (probe (a)).

    Args:
        client: the member's :class:`karmactl.members.clients.MemberClient`.
        timeout: total seconds per request.

    Returns:
        success True/False, or None when the member has no DNS workload or cannot be read.
    """
    from karmactl.members.clients import MemberUnreachable

    try:
        status, body = client.request("GET", f"/apis/apps/v1/namespaces/{DNS_NAMESPACE}/deployments",
                                      query=[("labelSelector", DNS_LABEL)], timeout=timeout)
    except MemberUnreachable as exc:
        return Observation(None, PROBE_DNS, f"cannot reach the member: {exc}")
    if not 200 <= status < 300 or not isinstance(body, dict):
        return Observation(None, PROBE_DNS, f"cannot list Deployments: {_status_text(status, body)}")
    deployments = [d for d in body.get("items") or [] if isinstance(d, dict)]
    if not deployments:
        return Observation(None, PROBE_DNS, f"no Deployment labelled {DNS_LABEL} in {DNS_NAMESPACE}")
    names = ", ".join(sorted(f"{DNS_NAMESPACE}/{(d.get('metadata') or {}).get('name')}" for d in deployments))

    def replicas(d, field):
        value = (d.get("status") or {}).get(field)
        return value if isinstance(value, int) else 0

    if not any(replicas(d, "readyReplicas") >= 1 or replicas(d, "availableReplicas") >= 1 for d in deployments):
        return Observation(False, PROBE_DNS, f"{names} has no ready replicas")
    try:
        status, ep = client.request("GET", f"/api/v1/namespaces/{DNS_NAMESPACE}/endpoints/{DNS_SERVICE}",
                                    timeout=timeout)
    except MemberUnreachable as exc:
        return Observation(None, PROBE_DNS, f"cannot reach the member: {exc}")
    if status == 404:
        return Observation(False, PROBE_DNS, f"Endpoints {DNS_NAMESPACE}/{DNS_SERVICE} not found")
    if not 200 <= status < 300 or not isinstance(ep, dict):
        return Observation(None, PROBE_DNS, f"cannot read Endpoints: {_status_text(status, ep)}")
    if not any(isinstance(s, dict) and s.get("addresses") for s in ep.get("subsets") or []):
        return Observation(False, PROBE_DNS, f"Endpoints {DNS_NAMESPACE}/{DNS_SERVICE} have no ready addresses")
    return Observation(True, PROBE_DNS)


def _status_text(status: int, body) -> str:
    """``403 Forbidden``: an answer's status and its Status reason (or the HTTP phrase)."""
    from http import HTTPStatus

    reason = body.get("reason") if isinstance(body, dict) else None
    if not reason:
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = ""
    return f"{status} {reason}".strip()


class _OwnClients:
    """A :data:`ClientFactory` for callers without a member layer: one
    :class:`~karmactl.members.clients.MemberClient` per Cluster (its kubeconfig resolved as a run
    resolves it), closed by :meth:`close`."""

    def __init__(self, state_dir, environ=None):
        self.state_dir, self.environ, self.clients = state_dir, environ, []

    def __call__(self, cluster: dict):
        from karmactl.members.clients import MemberClient
        from karmactl.members.kubeconfig import resolve_access

        client = MemberClient(resolve_access(cluster, self.state_dir or ".", environ=self.environ), API_TIMEOUT)
        self.clients.append(client)
        return client

    def close(self) -> None:
        for client in self.clients:
            client.close()


def default_client_factory(state_dir: Path | str | None, environ=None) -> "_OwnClients":
    """A :data:`ClientFactory` building a member client per Cluster from its kubeconfig annotations
    (``karmactl.members.kubeconfig``); call its ``close()`` when done."""
    return _OwnClients(state_dir, environ)


def observe(cluster: dict, command: list[str] | None, timeout: float, client_factory: ClientFactory) -> Observation:
    """One cluster's observation: the command when configured, else the DNS workload; never raises.
    The client comes from ``client_factory`` and stays open (its owner closes it)."""
    if command:
        return probe_command(command, cluster, timeout)
    try:
        client = client_factory(cluster)
    except Exception as exc:  # noqa: BLE001 - no kubeconfig, bad kubeconfig, unreachable: unknown
        from karmactl.members.kubeconfig import redact

        return Observation(None, PROBE_DNS, f"no client: {redact(str(exc))}")
    return probe_dns(client)


# --------------------------------------------------------------------------- the run's hook


def condition_consumed(snap: Snapshot, ctype: str = C.COND_SERVICE_DNS_READY) -> bool:
    """Whether any Remedy (``decisionMatches``) or ClusterTaintPolicy (add/remove conditions) reads ``ctype``."""
    for remedy in snap.of_kind("remedy.karmada.io", "Remedy"):
        for match in (remedy.get("spec") or {}).get("decisionMatches") or []:
            if ((match or {}).get("clusterConditionMatch") or {}).get("conditionType") == ctype:
                return True
    for policy in snap.of_kind("policy.karmada.io", "ClusterTaintPolicy"):
        spec = policy.get("spec") or {}
        for cond in (spec.get("addOnConditions") or []) + (spec.get("removeOnConditions") or []):
            if (cond or {}).get("conditionType") == ctype:
                return True
    return False


def detect_conditions(snap: Snapshot, now: str, report, client_factory: ClientFactory | None = None,
                      state_dir: Path | str | None = None, environ=None) -> Snapshot:
    """Probe every Cluster and fold the observations into a copy of ``snap`` (online runs only).

    Args:
        snap: the loaded snapshot.
        now: the run's clock.
        report: the run's ``RunReport`` (warnings are appended to ``report.warnings``).
        client_factory: ``f(cluster) -> MemberClient`` (the member layer's, when it has one); default
            :func:`default_client_factory` (closed here).
        state_dir: the state directory, for relative kubeconfig annotations.
        environ: the environment (default ``os.environ``): ``KARMACTL_ALLOW_DETECTION_COMMAND``.

    Returns:
        ``snap`` itself when detection is off or nothing changed, else a new snapshot.

    Raises:
        DetectionCommandRefused: detection would run ``conditionDetectionCommand`` and the
            operator did not set ``KARMACTL_ALLOW_DETECTION_COMMAND=1`` (the CLI exits 2).

    Invalid detection settings skip detection with a warning naming the key; other invalid settings
    are left to the run's ``compute``, which reports them.
    """
    try:
        settings = Settings.from_snapshot(snap)
        enabled, command, timeout = detection_settings(settings)
    except DetectionConfigError as exc:
        report.warnings.append(f"{exc}; condition detection skipped")
        return snap
    except ValueError:
        return snap
    if enabled == "auto":
        enabled = command is not None or condition_consumed(snap)
    if not enabled:
        return snap
    if command is not None:
        src = snap.sources.get(Settings.SETTINGS_KEY)
        check_command_allowed(environ, f"{src.path}:{src.line}: " if src is not None else "")
    from karmactl.controllers.helper.cluster import is_pull

    keys = [k for k in snap.keys_of_kind("cluster.karmada.io", "Cluster")  # a Pull member is never contacted
            if not (snap.user[k].get("metadata") or {}).get("deletionTimestamp") and not is_pull(snap.user[k])]
    if not keys:
        return snap
    from karmactl.members.clients import member_pool

    factory = client_factory or default_client_factory(state_dir, environ)
    try:
        with member_pool(min(MAX_WORKERS, len(keys)), "detection") as pool:
            observations = list(pool.map(lambda k: observe(snap.user[k], command, timeout, factory), keys))
    finally:
        if client_factory is None:
            factory.close()
    out = snap.copy_computed()
    for key, obs in zip(keys, observations):
        if obs.success is None:
            if command:  # the operator asked for this probe: say why it concluded nothing
                report.warnings.append(f"condition detection for cluster {key[3]}: {obs.probe}: {obs.detail}")
            continue
        cluster = snap.user[key]
        overlay = cluster_status.ingest_file_status(key, cluster, out.overlays.get(key), now)
        out.set_overlay(key, apply_observation(key, cluster, overlay, obs, now,
                                               settings.detect_failure_threshold, settings.detect_success_threshold))
    return out if out.overlays != snap.overlays else snap


__all__ = ["detect_conditions", "detection_settings", "probe_command", "probe_dns", "observe",
           "default_client_factory", "check_command_allowed", "DetectionConfigError", "DetectionCommandRefused"]
