"""The hand-off to a real Karmada: a state directory translated into what karmada-apiserver,
``karmadactl join`` and Karmada's component flags take (DESIGN §6). Pure: objects in, plan out.

What is translated and where it goes:

* every user-written object, in Karmada's current spelling (the proposals' aliases rewritten, as
  :func:`karmactl.api.defaults.normalize_aliases` does on load), without ``karmactl.io/``
  annotations and without the fields a real Karmada would drop or reject (each one listed as
  :class:`Lossy`); the objects are grouped by apply order (CRDs, Namespaces, Karmada's policies,
  resource templates), and a namespace used but never written gets its Namespace, since the
  karmada-apiserver (unlike a state directory) needs it before anything lives in it;
* WorkloadRebalancers are left out (one-off actions already carried out);
* Clusters become ``karmadactl join`` lines (Karmada serves Cluster from its aggregated API server
  and join creates the object and its ``secretRef``), their labels and spec fields that join has no
  flag for become ``kubectl`` lines;
* the ConfigMap ``karmada-system/karmactl-config`` becomes karmada-controller-manager flags
  (``cmd/controller-manager/app/options/options.go``, ``cluster_failover.go``) and feature gates
  (``pkg/features/features.go``); MultiClusterServices add the gate ``MultiClusterService``; the
  scheduling gates (``priorityBasedScheduling`` off, ``workloadAffinity`` on) go to the scheduler
  too (``karmada-scheduler.flags``); every setting without a Karmada equivalent
  (:data:`UNTRANSLATED_SETTINGS`) is listed in REPORT.md.
"""
from __future__ import annotations

import json
import shlex
from copy import deepcopy
from dataclasses import dataclass, field

from karmactl.api.defaults import normalize_aliases
from karmactl.api.kinds import group_of

KARMACTL_PREFIX = "karmactl.io/"
SETTINGS_KEY = ("", "ConfigMap", "karmada-system", "karmactl-config")
POLICY_GROUPS = ("policy.karmada.io", "remedy.karmada.io", "networking.karmada.io", "config.karmada.io",
                 "apps.karmada.io", "autoscaling.karmada.io")
# namespaces every kube-apiserver has (or that Karmada's installer creates)
PREEXISTING_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease", "karmada-system")
# metadata the API server owns: never part of what a user hands over
SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink",
                   "deletionTimestamp", "deletionGracePeriodSeconds")
FILES = (("00-crds.yaml", "CustomResourceDefinitions (apply first; wait until Established)"),
         ("10-namespaces.yaml", "Namespaces"),
         ("20-policies.yaml", "Karmada policies: overrides before propagation policies, then the rest"),
         ("30-resources.yaml", "resource templates"))
_POLICY_ORDER = {"ClusterOverridePolicy": 0, "OverridePolicy": 1, "ClusterPropagationPolicy": 2,
                 "PropagationPolicy": 3}

# Fields karmactl implements from the design documents that Karmada's CRDs (v1.19) do not have or
# do not allow: (policy.karmada.io kinds, path, test of the value, why). The export leaves them out.
_PROPAGATION = ("PropagationPolicy", "ClusterPropagationPolicy")
PROPOSAL_FIELDS = (
    (_PROPAGATION, ("spec", "failover", "application", "preConditions"), None,
     "proposal application-failover.md: Karmada has no preConditions and judges health from the first observation"),
    (_PROPAGATION, ("spec", "failover", "application", "blockPredecessorSeconds"), None,
     "proposal application-failover.md: Karmada may place the workload back on the cluster it was just evicted from"),
    (_PROPAGATION, ("spec", "failover", "cluster", "gracePeriodSeconds"), None,
     "proposal configurable-cluster-failover.md: Karmada waits --graceful-eviction-timeout for cluster evictions"),
    (_PROPAGATION, ("spec", "failover", "cluster", "purgeMode"), lambda v: v == "Never",
     "Karmada's CRD allows only Directly and Gracefully for cluster failover (it rejects Never): without it "
     "Karmada purges Gracefully and deletes the evicted copy"),
)

# karmactl-config data keys with no Karmada equivalent
UNTRANSLATED_SETTINGS = {
    "memberRequestTimeout": "Karmada's member clients have no per-request timeout flag",
    "memberConcurrency": "Karmada syncs Works with --concurrent-work-syncs, which is not a per-member limit",
    "memberWorkers": "Karmada's --concurrent-work-syncs counts Works across all members, not requests per member",
    "conditionDetection": "Karmada's control plane does not probe ServiceDomainNameResolutionReady (a separate "
                          "cluster problem detector must report it)",
    "conditionDetectionCommand": "Karmada's control plane runs no detection command",
    "conditionDetectionTimeout": "Karmada's control plane runs no detection command",
    "detectFailureThreshold": "Karmada has no thresholds for detected conditions",
    "detectSuccessThreshold": "Karmada has no thresholds for detected conditions",
    "memberRetries": "Karmada's member clients retry a 429/5xx with Retry-After as client-go does (10 times); "
                     "it has no flag to change that",
}
"""karmactl-config keys without a Karmada equivalent: each one set is listed in REPORT.md with its reason."""

TRANSLATED_SETTINGS = frozenset({
    "clusterFailover", "clusterFailureThreshold", "clusterSuccessThreshold", "clusterStatusUpdateFrequency",
    "gracefulEvictionTimeout", "noExecuteTaintEvictionPurgeMode", "propagationPolicyPreemption",
    "skippedPropagatingNamespaces", "memberQPS", "memberBurst", "statefulFailoverInjection",
    "federatedQuotaEnforcement", "priorityBasedScheduling", "workloadAffinity", "multiplePodTemplatesScheduling",
})
"""karmactl-config keys that become Karmada component flags (:func:`_settings_flags`)."""


@dataclass(frozen=True)
class Lossy:
    """One thing a real Karmada would drop or reject: ``what`` (``PropagationPolicy default/nginx``
    or ``karmactl-config``), ``where`` (``file:line``), ``path`` (dotted field), ``why``."""

    what: str
    where: str
    path: str
    why: str


@dataclass(frozen=True)
class Join:
    """One member to join: ``name``, ``kubeconfig`` paths (merged in order), ``context``, the
    Cluster's ``labels`` and the ``spec`` fields join has no flag for, ``provider``/``region``/``zones``
    (join flags), and ``pull`` (``syncMode: Pull``: ``karmadactl register`` on the member instead)."""

    name: str
    kubeconfig: tuple
    context: str
    provider: str = ""
    region: str = ""
    zones: tuple = ()
    labels: dict = field(default_factory=dict)
    patch: dict = field(default_factory=dict)
    pull: bool = False


@dataclass
class Export:
    """The translated state directory.

    Attributes:
        files: ``{file name: [objects]}`` in apply order (names from :data:`FILES`; empty ones absent).
        joins: one :class:`Join` per Cluster, by name.
        controller_manager_flags: ``--flag=value`` strings for karmada-controller-manager.
        scheduler_flags: ``--flag=value`` strings for karmada-scheduler (its feature gates
            ``PriorityBasedScheduling`` and ``WorkloadAffinity`` when karmactl-config sets them
            away from Karmada's defaults); empty when the scheduler's defaults are Karmada's.
        lossy: fields and settings a real Karmada would drop or reject.
        notes: behaviour differences that lose nothing written (defaults, implied Namespaces, stripped
            karmactl annotations), one line each.
    """

    files: dict = field(default_factory=dict)
    joins: list = field(default_factory=list)
    controller_manager_flags: list = field(default_factory=list)
    scheduler_flags: list = field(default_factory=list)
    lossy: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def translate(objects: list, access: dict) -> Export:
    """Translate the user-written objects of a state directory.

    Args:
        objects: ``[(obj, where, namespaced)]``: each object as written in its file (not defaulted;
            namespaced kinds with ``metadata.namespace`` set), ``where`` = ``"file:line"``,
            ``namespaced`` from the kind registry. Objects must already be valid (the caller loads
            the state directory first).
        access: ``{cluster name: (kubeconfig paths, context)}``, paths absolute (the caller resolves
            ``karmactl.io/kubeconfig`` against the state directory, or the fallback kubeconfig).

    Returns:
        The :class:`Export`; nothing is raised for lossy content (it is listed).
    """
    ex = Export()
    buckets: dict[str, list] = {name: [] for name, _ in FILES}
    namespaces_written: set = set()
    namespaces_used: dict = {}
    settings: dict | None = None
    stripped: dict = {}
    for obj, where, namespaced in objects:
        group, kind = group_of(obj.get("apiVersion", "")), obj.get("kind")
        md = obj.get("metadata") or {}
        key = (group, kind, md.get("namespace") or "", md.get("name"))
        if key == SETTINGS_KEY:
            settings = dict(obj.get("data") or {})
            continue
        if group == "cluster.karmada.io" and kind == "Cluster":
            ex.joins.append(_join_of(obj, access))
            continue
        if group == "apps.karmada.io" and kind == "WorkloadRebalancer":
            # a one-off action karmactl has carried out: applied to Karmada it would get a new
            # creationTimestamp and reschedule the workloads afresh once more
            ex.notes.append(f"WorkloadRebalancer {md.get('name')} ({where}) not handed over: a one-off "
                            f"reschedule, applied to Karmada it would run again")
            continue
        out = _karmada_spelling(obj, group, kind, where, ex, stripped)
        if namespaced:
            namespaces_used.setdefault(md["namespace"], where)
        if group == "" and kind == "Namespace":
            namespaces_written.add(md.get("name"))
        buckets[_file_of(group, kind)].append(out)
    for ns in sorted(set(namespaces_used) - namespaces_written - set(PREEXISTING_NAMESPACES)):
        buckets["10-namespaces.yaml"].append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        ex.notes.append(f"Namespace {ns} added: objects live in it ({namespaces_used[ns]}) and karmada-apiserver "
                        f"needs it to exist")
    buckets["20-policies.yaml"].sort(key=lambda o: _POLICY_ORDER.get(o.get("kind"), 9))
    ex.files = {name: objs for name, objs in buckets.items() if objs}
    for ann, count in sorted(stripped.items()):
        ex.notes.append(f"annotation {ann} removed from {count} object(s) (karmactl's own)")
    ex.joins.sort(key=lambda j: j.name)
    for j in ex.joins:
        if j.pull:
            ex.lossy.append(Lossy(f"Cluster {j.name}", "", "spec.syncMode",
                                  "Pull clusters join by running `karmadactl register` on the member (see join.sh)"))
    has_taint_policies = any(o.get("kind") == "ClusterTaintPolicy" for o in buckets["20-policies.yaml"])
    _settings_flags(ex, settings or {}, has_taint_policies,
                    any(o.get("kind") == "MultiClusterService" for o in buckets["20-policies.yaml"]))
    return ex


def _karmada_spelling(obj: dict, group: str, kind: str, where: str, ex: Export, stripped: dict) -> dict:
    """A copy of ``obj`` as karmada-apiserver takes it: the proposals' aliases rewritten, without
    server-set fields, ``karmactl.io/`` annotations (counted in ``stripped``) or the proposals'
    fields Karmada lacks (each listed in ``ex.lossy``)."""
    out, _errors = normalize_aliases(obj)
    out = _without_server_fields(out)
    for ann in sorted(a for a in (out["metadata"].get("annotations") or {}) if a.startswith(KARMACTL_PREFIX)):
        stripped.setdefault(ann, 0)
        stripped[ann] += 1
    _strip_karmactl_annotations(out)
    what = _describe(kind, obj.get("metadata") or {})
    for kinds, path, test, why in PROPOSAL_FIELDS:
        if group == "policy.karmada.io" and kind in kinds and _pop_path(out, path, test):
            ex.lossy.append(Lossy(what, where, ".".join(path), why))
    return out


def _file_of(group: str, kind: str) -> str:
    """The file of :data:`FILES` an object goes to (the apply order: CRDs, Namespaces, policies, the rest)."""
    if group == "apiextensions.k8s.io" and kind == "CustomResourceDefinition":
        return "00-crds.yaml"
    if group == "" and kind == "Namespace":
        return "10-namespaces.yaml"
    if group in POLICY_GROUPS:
        return "20-policies.yaml"
    return "30-resources.yaml"


def _describe(kind: str, md: dict) -> str:
    ns = md.get("namespace")
    return f"{kind} {ns + '/' if ns else ''}{md.get('name')}"


def _without_server_fields(obj: dict) -> dict:
    out = {k: v for k, v in obj.items() if k != "status"}
    out["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SERVER_METADATA}
    return out


def _strip_karmactl_annotations(obj: dict) -> None:
    md = obj["metadata"]
    anns = {k: v for k, v in (md.get("annotations") or {}).items() if not k.startswith(KARMACTL_PREFIX)}
    if anns:
        md["annotations"] = anns
    else:
        md.pop("annotations", None)


def _pop_path(obj: dict, path: tuple, test) -> bool:
    """Remove ``path`` from ``obj`` (copying the dicts on the way, ``obj`` itself is the caller's
    copy) when present and ``test(value)`` holds; True if removed. Emptied parents are removed too."""
    chain = [obj]
    for name in path[:-1]:
        nxt = chain[-1].get(name)
        if not isinstance(nxt, dict):
            return False
        nxt = dict(nxt)
        chain[-1][name] = nxt
        chain.append(nxt)
    last = path[-1]
    if chain[-1].get(last) is None or (test is not None and not test(chain[-1][last])):
        return False
    del chain[-1][last]
    for holder, name in zip(reversed(chain[:-1]), reversed(path[:-1])):
        if holder[name]:
            break
        del holder[name]
    return True


def _join_of(cluster: dict, access: dict) -> Join:
    md = cluster.get("metadata") or {}
    spec = cluster.get("spec") or {}
    name = md.get("name")
    paths, context = access.get(name, ((), name))
    zones = tuple(spec.get("zones") or ([spec["zone"]] if spec.get("zone") else []))
    # what join sets itself (endpoint, secrets, sync mode) or takes as flags stays out of the patch
    patch = {k: deepcopy(v) for k, v in spec.items()
             if k in ("taints", "resourceModels", "proxyURL", "proxyHeader", "insecureSkipTLSVerification") and v}
    return Join(name=name, kubeconfig=tuple(paths), context=context, provider=spec.get("provider") or "",
                region=spec.get("region") or "", zones=zones, labels=dict(md.get("labels") or {}), patch=patch,
                pull=spec.get("syncMode") == "Pull")


def _seconds(value: float) -> str:
    """A Go duration flag value: ``30s``, ``1.5s``."""
    return f"{int(value)}s" if float(value).is_integer() else f"{value}s"


def _settings_flags(ex: Export, data: dict, has_taint_policies: bool, has_mcs: bool = False) -> None:
    """karmada-controller-manager flags for karmactl-config's ``data`` (``has_mcs``: the state has
    MultiClusterServices, whose controllers Karmada runs only with the gate ``MultiClusterService``)."""
    from karmactl.api.snapshot import Settings

    s = Settings.from_snapshot(_settings_snapshot(data))
    cm = ex.controller_manager_flags
    gates = {}
    if s.cluster_failover or has_taint_policies:
        # Karmada starts the taint manager and the ClusterTaintPolicy controller only with Failover
        gates["Failover"] = "true"
    if s.policy_preemption:
        gates["PropagationPolicyPreemption"] = "true"
    if s.stateful_failover_injection:  # alpha, off by default: the application failover controller
        gates["StatefulFailoverInjection"] = "true"
    scheduler_gates = {}
    if not s.priority_based_scheduling:  # beta, on by default: the detector and the scheduler's queue
        gates["PriorityBasedScheduling"] = scheduler_gates["PriorityBasedScheduling"] = "false"
    if s.workload_affinity:  # alpha, off by default: the detector's groups and the scheduler's filters
        gates["WorkloadAffinity"] = scheduler_gates["WorkloadAffinity"] = "true"
    if s.multiple_pod_templates_scheduling:  # alpha, off: the detector's components, the scheduler's sets
        gates["MultiplePodTemplatesScheduling"] = scheduler_gates["MultiplePodTemplatesScheduling"] = "true"
    if scheduler_gates:
        ex.scheduler_flags.append("--feature-gates=" + ",".join(f"{k}={v}" for k, v in scheduler_gates.items()))
    if has_mcs:  # alpha, off by default (pkg/features/features.go)
        gates["MultiClusterService"] = "true"
    if s.federated_quota_enforcement:
        # the controller manager sums overallUsed from the bindings; the webhook refuses placements
        gates["FederatedQuotaEnforcement"] = "true"
        ex.notes.append("federatedQuotaEnforcement is true: start karmada-webhook with "
                        "--feature-gates=FederatedQuotaEnforcement=true as well (its ResourceBinding webhook "
                        "refuses placements beyond a FederatedResourceQuota's overall)")
    if gates:
        cm.append("--feature-gates=" + ",".join(f"{k}={v}" for k, v in gates.items()))
    if s.cluster_failover:
        cm.append("--enable-no-execute-taint-eviction=true")
        cm.append(f"--no-execute-taint-eviction-purge-mode={s.no_execute_purge_mode}")
    else:
        ex.notes.append("clusterFailover is false: Karmada's default (Failover gate off, no NoExecute eviction)")
        if "noExecuteTaintEvictionPurgeMode" in data:
            ex.notes.append("noExecuteTaintEvictionPurgeMode has no effect while clusterFailover is false")
    cm.append(f"--cluster-failure-threshold={_seconds(s.failure_threshold)}")
    cm.append(f"--cluster-success-threshold={_seconds(s.success_threshold)}")
    cm.append(f"--cluster-status-update-frequency={_seconds(s.status_update_frequency)}")
    cm.append(f"--graceful-eviction-timeout={_seconds(s.graceful_eviction_timeout)}")
    cm.append("--skipped-propagating-namespaces=" + ",".join(s.skipped_namespaces))
    qps, burst = (str(data.get(k, "")).strip() for k in ("memberQPS", "memberBurst"))
    if qps and float(qps) > 0:
        cm.append(f"--cluster-api-qps={qps}")
    elif qps:  # Karmada reads a QPS <= 0 as its default (pkg/util/membercluster_ratelimiter.go)
        ex.lossy.append(Lossy("ConfigMap karmada-system/karmactl-config", "", "data.memberQPS",
                              "Karmada has no unlimited member QPS: --cluster-api-qps <= 0 means its default, 40"))
    if burst:
        cm.append(f"--cluster-api-burst={burst}")
    for k in sorted(data):
        if k in UNTRANSLATED_SETTINGS:
            ex.lossy.append(Lossy("ConfigMap karmada-system/karmactl-config", "", f"data.{k}", UNTRANSLATED_SETTINGS[k]))


def _settings_snapshot(data: dict):
    from karmactl.api.kinds import KindRegistry
    from karmactl.api.snapshot import Settings, Snapshot

    snap = Snapshot(KindRegistry())
    if data:
        snap.user[Settings.SETTINGS_KEY] = {"data": data}
    return snap


# --------------------------------------------------------------------------- rendering

def join_script(ex: Export) -> str:
    """``join.sh``: one ``karmadactl join`` per push-mode Cluster (and ``kubectl`` lines for its labels
    and the spec fields join has no flag for), against ``$KARMADA_KUBECONFIG``."""
    q = shlex.quote
    lines = ["#!/bin/sh",
             "# Join the member clusters of a karmactl state directory to a Karmada control plane",
             "# (written by `karmactl export --to-karmada`). Clusters are served by Karmada's aggregated",
             "# API server: join creates each one with its secretRef, so they are not in the YAML files.",
             "set -eu",
             ': "${KARMADA_KUBECONFIG:?set KARMADA_KUBECONFIG to the kubeconfig of karmada-apiserver}"', ""]
    for j in ex.joins:
        if j.pull:
            lines.append(f"# {j.name}: syncMode Pull: on the member, run `karmadactl register` with its "
                         f"--cluster-name {q(j.name)} (see Karmada's pull-mode docs)")
            lines.append("")
            continue
        env = ""
        flags = ['--kubeconfig "$KARMADA_KUBECONFIG"']
        if len(j.kubeconfig) == 1:
            flags.append(f"--cluster-kubeconfig {q(j.kubeconfig[0])}")
        elif j.kubeconfig:
            env = f"KUBECONFIG={q(':'.join(j.kubeconfig))} "
        flags.append(f"--cluster-context {q(j.context)}")
        if j.provider:
            flags.append(f"--cluster-provider {q(j.provider)}")
        if j.region:
            flags.append(f"--cluster-region {q(j.region)}")
        if j.zones:
            flags.append(f"--cluster-zones {q(','.join(j.zones))}")
        lines.append(f"{env}karmadactl join {q(j.name)} " + " ".join(flags))
        if j.labels:
            pairs = " ".join(q(f"{k}={v}") for k, v in sorted(j.labels.items()))
            lines.append(f"kubectl --kubeconfig \"$KARMADA_KUBECONFIG\" label --overwrite cluster {q(j.name)} {pairs}")
        if j.patch:
            body = json.dumps({"spec": j.patch}, sort_keys=True, separators=(",", ":"))
            lines.append(f"kubectl --kubeconfig \"$KARMADA_KUBECONFIG\" patch cluster {q(j.name)} --type merge -p {q(body)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def report_markdown(ex: Export, check: list | None = None) -> str:
    """``REPORT.md``: files, flags, lossy fields, notes, and the ``--check`` results when given
    (``check``: lines, one per checked file or rejected object; None = not checked)."""
    out = ["# Hand-off to Karmada", "", "Apply in this order with the kubeconfig of karmada-apiserver:", ""]
    for name, label in FILES:
        if name in ex.files:
            out.append(f"- `{name}`: {label} ({len(ex.files[name])})")
    out.append(f"- `join.sh`: {len(ex.joins)} member cluster(s)")
    out += ["", "## karmada-controller-manager flags", "", "```"] + ex.controller_manager_flags + ["```"]
    if ex.scheduler_flags:
        out += ["", "## karmada-scheduler flags", "", "```"] + ex.scheduler_flags + ["```"]
    else:
        out += ["", "karmada-scheduler needs no flags: its defaults are karmactl's."]
    out += ["", f"## Dropped: fields and settings a real Karmada does not keep ({len(ex.lossy)})", ""]
    out += [f"- {lo.what}{' (' + lo.where + ')' if lo.where else ''}: `{lo.path}`: {lo.why}" for lo in ex.lossy] or ["none"]
    if ex.notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in ex.notes]
    out += ["", "## Check against Karmada's CRDs", ""]
    out += (check or ["none"]) if check is not None else ["not run (`--check`)"]
    return "\n".join(out) + "\n"


__all__ = ["Export", "FILES", "Join", "Lossy", "PROPOSAL_FIELDS", "TRANSLATED_SETTINGS", "UNTRANSLATED_SETTINGS",
           "join_script", "report_markdown", "translate"]
