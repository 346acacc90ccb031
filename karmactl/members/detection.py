"""Cluster condition detection probes (I/O): ``ServiceDomainNameResolutionReady`` for Remedy.

The design document ``docs/proposals/remedy-cluster-status-based-policy.md`` ("Cluster status
detection") runs ``nslookup kubernetes.default`` inside each member (Karmada's sample agent
``pkg/servicenameresolutiondetector/coredns/detector.go``). karmactl has no agent in the members, so
one online run observes, per Cluster, one of:

(b) the operator's command, when ``data.conditionDetectionCommand`` is set in the ConfigMap
    ``karmada-system/karmactl-config``: split like a shell line (no shell is run), ``{cluster}`` and
    ``{apiEndpoint}`` substituted in every word, run with a timeout of
    ``data.conditionDetectionTimeout`` seconds (default 10). Exit 0 = success; another exit status or
    the timeout = failure; a command that cannot be started = unknown (with a warning);
(a) otherwise the member's DNS through its API: the Deployments in ``kube-system`` labelled
    ``k8s-app=kube-dns`` (CoreDNS or kube-dns), healthy when one has ``readyReplicas >= 1`` (or
    ``availableReplicas >= 1``), and the ``kube-system/kube-dns`` Endpoints having at least one ready
    address. A member without such a Deployment, or one that cannot be reached or has no kubeconfig,
    is unknown: nothing is written (the Ready condition reports reachability).

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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from karmactl.api import constants as C
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

# client_factory(cluster: dict) -> kubernetes.client.ApiClient (raises on missing credentials)
ClientFactory = Callable[[dict], object]


class DetectionConfigError(ValueError):
    """A detection setting in karmactl-config does not parse (message names the key)."""


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
            timeout = float(str(data[TIMEOUT_KEY]).rstrip("s"))
        except ValueError:
            timeout = -1.0
        if timeout <= 0:
            raise DetectionConfigError(f'karmactl-config data.{TIMEOUT_KEY}: "{data[TIMEOUT_KEY]}" is not a '
                                       f"positive number of seconds")
    return {"true": True, "false": False}.get(enabled, "auto"), command, timeout


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
    last = next((ln.strip() for ln in reversed((proc.stderr or proc.stdout or "").splitlines()) if ln.strip()), "")
    return Observation(False, label, f"exit status {proc.returncode}" + (f": {last[:200]}" if last else ""))


def probe_dns(api_client, timeout: float = API_TIMEOUT) -> Observation:
    """Check the member's DNS workload and the kube-dns Endpoints through its API (probe (a)).

    Args:
        api_client: a ``kubernetes.client.ApiClient`` for the member.
        timeout: seconds per request.

    Returns:
        success True/False, or None when the member has no DNS workload or cannot be read.
    """
    from kubernetes import client as k8s
    from kubernetes.client.rest import ApiException

    try:
        deployments = k8s.AppsV1Api(api_client).list_namespaced_deployment(
            DNS_NAMESPACE, label_selector=DNS_LABEL, _request_timeout=timeout).items
    except ApiException as exc:
        return Observation(None, PROBE_DNS, f"cannot list Deployments: {exc.status} {exc.reason}")
    except Exception as exc:  # noqa: BLE001 - connection errors of any kind: unknown
        return Observation(None, PROBE_DNS, f"cannot reach the member: {type(exc).__name__}")
    if not deployments:
        return Observation(None, PROBE_DNS, f"no Deployment labelled {DNS_LABEL} in {DNS_NAMESPACE}")
    names = ", ".join(sorted(f"{DNS_NAMESPACE}/{d.metadata.name}" for d in deployments))
    ready = [d for d in deployments
             if ((d.status and d.status.ready_replicas) or 0) >= 1 or ((d.status and d.status.available_replicas) or 0) >= 1]
    if not ready:
        return Observation(False, PROBE_DNS, f"{names} has no ready replicas")
    try:
        ep = k8s.CoreV1Api(api_client).read_namespaced_endpoints(DNS_SERVICE, DNS_NAMESPACE, _request_timeout=timeout)
    except ApiException as exc:
        if exc.status == 404:
            return Observation(False, PROBE_DNS, f"Endpoints {DNS_NAMESPACE}/{DNS_SERVICE} not found")
        return Observation(None, PROBE_DNS, f"cannot read Endpoints: {exc.status} {exc.reason}")
    except Exception as exc:  # noqa: BLE001
        return Observation(None, PROBE_DNS, f"cannot reach the member: {type(exc).__name__}")
    if not any(s.addresses for s in ep.subsets or []):
        return Observation(False, PROBE_DNS, f"Endpoints {DNS_NAMESPACE}/{DNS_SERVICE} have no ready addresses")
    return Observation(True, PROBE_DNS)


def _access(cluster: dict, state_dir) -> tuple[tuple[str, ...], str]:
    """(kubeconfig paths, context) of a Cluster: the member layer's ``resolve_access`` when present,
    else the annotations ``karmactl.io/kubeconfig`` (relative to the state directory) and
    ``karmactl.io/context`` (default: the cluster's name). Raises when no kubeconfig is named."""
    try:
        from karmactl.members.kubeconfig import resolve_access
    except ImportError:  # the member layer is not installed
        md = cluster.get("metadata") or {}
        ann = md.get("annotations") or {}
        path = ann.get("karmactl.io/kubeconfig")
        if not path:
            raise LookupError("no karmactl.io/kubeconfig annotation") from None
        path = Path(os.path.expanduser(path))
        return (str(path if path.is_absolute() else Path(state_dir) / path),), ann.get("karmactl.io/context") or md.get("name")
    access = resolve_access(cluster, state_dir)
    return access.paths, access.context


def default_client_factory(state_dir: Path | str | None) -> ClientFactory:
    """An ApiClient per Cluster from its kubeconfig annotations (``karmactl.members.kubeconfig``),
    retries off. Raises from the returned callable when the Cluster cannot be reached by kubeconfig."""

    def factory(cluster: dict):
        from kubernetes import config

        paths, context = _access(cluster, state_dir or ".")
        api = config.new_client_from_config(config_file=os.pathsep.join(paths), context=context)
        api.configuration.retries = 0
        return api

    return factory


def observe(cluster: dict, command: list[str] | None, timeout: float, client_factory: ClientFactory) -> Observation:
    """One cluster's observation: the command when configured, else the DNS workload; never raises."""
    if command:
        return probe_command(command, cluster, timeout)
    try:
        api = client_factory(cluster)
    except Exception as exc:  # noqa: BLE001 - no kubeconfig, bad kubeconfig: unknown
        return Observation(None, PROBE_DNS, f"no client: {exc}")
    try:
        return probe_dns(api)
    finally:
        close = getattr(api, "close", None)
        if close is not None:
            try:
                close()
            except Exception:  # noqa: BLE001
                pass


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
                      state_dir: Path | str | None = None) -> Snapshot:
    """Probe every Cluster and fold the observations into a copy of ``snap`` (online runs only).

    Args:
        snap: the loaded snapshot.
        now: the run's clock.
        report: the run's ``RunReport`` (warnings are appended to ``report.warnings``).
        client_factory: ``f(cluster) -> ApiClient`` (the member layer's, when it has one); default
            :func:`default_client_factory`.
        state_dir: the state directory, for relative kubeconfig annotations.

    Returns:
        ``snap`` itself when detection is off or nothing changed, else a new snapshot.

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
    factory = client_factory or default_client_factory(state_dir)
    keys = [k for k in snap.keys_of_kind("cluster.karmada.io", "Cluster")
            if not (snap.user[k].get("metadata") or {}).get("deletionTimestamp")]
    if not keys:
        return snap
    with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(keys))) as pool:
        observations = list(pool.map(lambda k: observe(snap.user[k], command, timeout, factory), keys))
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
           "default_client_factory", "DetectionConfigError"]
