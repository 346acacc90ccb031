"""The in-memory snapshot one run works on, and the context passed to controller steps.

Controllers take a :class:`Snapshot` (or the objects they need) and ``now`` and return or record
changes; they never read files or talk to members (DESIGN §2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from karmactl.api.durations import parse_duration
from karmactl.api.kinds import KindInfo, KindRegistry
from karmactl.api.regex import RegexError, compile_user_regex

Key = tuple  # (group, kind, namespace, name)


@dataclass
class Snapshot:
    """Everything one run works on, held in memory as plain dicts.

    Attributes:
        user: user-written objects by key, as written (after alias normalisation and defaulting).
        sources: where each user object was read from (``karmactl.store.state.Source``).
        overlays: computed metadata/status of user objects (claim labels, uid, generation, status,
            controller taints under ``spec.taints``, and karmactl's private bookkeeping under the
            top-level key ``observed``).
        bindings: ResourceBindings and ClusterResourceBindings by key.
        works: Works by key.
        registry: the kinds known, CRDs from the state directory included.

    Objects in the maps are never mutated in place by controllers: a change replaces the value,
    so the run can diff the loaded snapshot against the computed one by identity and equality.
    """

    registry: KindRegistry
    user: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict)
    overlays: dict = field(default_factory=dict)
    bindings: dict = field(default_factory=dict)
    works: dict = field(default_factory=dict)

    def kind_info(self, key: Key) -> KindInfo | None:
        return self.registry.by_group_kind(key[0], key[1])

    def of_kind(self, group: str, kind: str) -> list[dict]:
        """User objects of one kind, sorted by key."""
        return [self.user[k] for k in sorted(self.user) if k[0] == group and k[1] == kind]

    def keys_of_kind(self, group: str, kind: str) -> list[Key]:
        return sorted(k for k in self.user if k[0] == group and k[1] == kind)

    def copy_computed(self) -> "Snapshot":
        """A snapshot sharing user objects but with shallow-copied computed maps (for diffing)."""
        return Snapshot(self.registry, self.user, self.sources, dict(self.overlays), dict(self.bindings),
                        dict(self.works))

    def set_overlay(self, key: Key, new: dict | None) -> bool:
        """Replace an overlay; returns True when it changed."""
        return _replace(self.overlays, key, new)

    def set_binding(self, key: Key, new: dict | None) -> bool:
        return _replace(self.bindings, key, new)

    def set_work(self, key: Key, new: dict | None) -> bool:
        return _replace(self.works, key, new)


def _replace(m: dict, key, new) -> bool:
    old = m.get(key)
    if new is None:
        if key in m:
            del m[key]
            return True
        return False
    if old is new or old == new:
        return False
    m[key] = new
    return True


MEMBER_KNOBS = (  # Knobs attribute, karmactl-config key, environment variable, kind
    ("timeout", "memberRequestTimeout", "KARMACTL_MEMBER_TIMEOUT", "seconds"),
    ("qps", "memberQPS", "KARMACTL_MEMBER_QPS", "rate"),
    ("burst", "memberBurst", "KARMACTL_MEMBER_BURST", "count"),
    ("workers", "memberWorkers", "KARMACTL_MEMBER_WORKERS", "count"),
    ("concurrency", "memberConcurrency", "KARMACTL_MEMBER_CONCURRENCY", "count"),
    ("retries", "memberRetries", "KARMACTL_MEMBER_RETRIES", "retries"),
)
"""The member-request settings (read by ``karmactl/members/layer.py``); the environment variable wins."""

_KNOB_EXPECT = {"seconds": "a duration > 0 (a Go duration such as 2s or 500ms, or a number of seconds)", "rate": "a number of requests per second (0: no limit)",
                "count": "a whole number >= 1", "retries": "a whole number >= 0"}


def member_knob(kind: str, raw) -> float | int:
    """One member setting from its text: ``seconds`` a duration > 0 (``5``, ``5s``, ``500ms``: Go's
    syntax, :func:`karmactl.api.durations.parse_duration`), ``rate`` any
    number (<= 0 is no limit), ``count`` a whole number >= 1, ``retries`` a whole number >= 0.

    Raises:
        ValueError: the value does not parse; the message says what was expected (the caller names the key).
    """
    text = str(raw).strip()
    try:
        if kind == "seconds":
            value = parse_duration(text)
            if value > 0:
                return value
        elif kind == "rate":
            value = float(text)
            if math.isfinite(value):
                return value
        else:
            count = int(text)
            if count >= (0 if kind == "retries" else 1):
                return count
    except ValueError:
        pass
    raise ValueError(f'"{raw}" is not {_KNOB_EXPECT[kind]}')


@dataclass
class Settings:
    """karmactl's control-plane settings, read from the ConfigMap ``karmada-system/karmactl-config``
    in the state directory (a reserved namespace, so Karmada itself ignores it).

    Attributes (ConfigMap ``data`` keys in brackets, all optional):
        cluster_failover: taint NotReady/Unreachable clusters NoExecute and evict (``clusterFailover``,
            default "true": DESIGN §3.4).
        failure_threshold / success_threshold: seconds (``clusterFailureThreshold`` / ``clusterSuccessThreshold``, 30).
        status_update_frequency: seconds between cluster health probes of the continuous loop
            (``clusterStatusUpdateFrequency``, 10: Karmada's ``--cluster-status-update-frequency``).
        graceful_eviction_timeout: seconds (``gracefulEvictionTimeout``, 600).
        no_execute_purge_mode: purge mode of taint evictions without ``failover.cluster``
            (``noExecuteTaintEvictionPurgeMode``, Gracefully).
        detect_failure_threshold / detect_success_threshold: seconds for cluster condition detection
            (``detectFailureThreshold`` / ``detectSuccessThreshold``, 30).
        skipped_namespaces: regexes (``skippedPropagatingNamespaces``, comma-separated, "kube-.*").
        policy_preemption: Karmada's feature gate ``PropagationPolicyPreemption``
            (``propagationPolicyPreemption``, default "false", as Karmada's).
        stateful_failover_injection: Karmada's feature gate ``StatefulFailoverInjection`` (alpha,
            default off): failover ``statePreservation`` rules are evaluated and injected
            (``statefulFailoverInjection``, "false").
        federated_quota_enforcement: Karmada's feature gate ``FederatedQuotaEnforcement`` (alpha,
            default off): the scheduler's placements are checked against every FederatedResourceQuota's
            ``overall`` and its ``overallUsed`` is summed from the ResourceBindings
            (``federatedQuotaEnforcement``, "false").
        multiple_pod_templates_scheduling: Karmada's feature gate ``MultiplePodTemplatesScheduling``
            (alpha, default off): templates whose interpreter has ``InterpretComponent`` get
            ``spec.components`` on their binding instead of ``replicas``/``replicaRequirements``, and a
            binding with components whose placement asks for exactly one cluster is scheduled as a
            whole set (``multiplePodTemplatesScheduling``, "false").
        priority_based_scheduling: Karmada's feature gate ``PriorityBasedScheduling`` (beta since
            v1.19, default on): the detector resolves a policy's ``schedulePriority`` into the
            ResourceBinding's ``spec.schedulePriority.priority`` and the scheduler takes bindings in
            priority order (``priorityBasedScheduling``, "true").
        workload_affinity: Karmada's feature gate ``WorkloadAffinity`` (alpha, default off): the
            detector writes ``spec.workloadAffinityGroups`` and the scheduler's WorkloadAffinity /
            WorkloadAntiAffinity filters act on them (``workloadAffinity``, "false").
    """

    cluster_failover: bool = True
    failure_threshold: float = 30.0
    success_threshold: float = 30.0
    status_update_frequency: float = 10.0
    graceful_eviction_timeout: float = 600.0
    no_execute_purge_mode: str = "Gracefully"
    detect_failure_threshold: float = 30.0
    detect_success_threshold: float = 30.0
    skipped_namespaces: tuple = ("kube-.*",)
    policy_preemption: bool = False
    stateful_failover_injection: bool = False
    federated_quota_enforcement: bool = False
    multiple_pod_templates_scheduling: bool = False
    priority_based_scheduling: bool = True
    workload_affinity: bool = False
    extra: dict = field(default_factory=dict)

    SETTINGS_KEY = ("", "ConfigMap", "karmada-system", "karmactl-config")

    @classmethod
    def from_snapshot(cls, snap: Snapshot) -> "Settings":
        """Settings from the state directory's ConfigMap (defaults when absent).

        Raises:
            SettingsError: a value that does not parse (message names the key).
        """
        cm = snap.user.get(cls.SETTINGS_KEY)
        return cls.from_data(dict((cm or {}).get("data") or {}))

    @classmethod
    def from_data(cls, data: dict) -> "Settings":
        """Settings from the ConfigMap's ``data`` (every value a string, as a ConfigMap's).

        Durations are Go durations >= 0 (``30s``, ``1m``, ``1.5m``, ``500ms``) or plain numbers of
        seconds (``30``), :func:`karmactl.api.durations.parse_duration`; regular expressions are
        RE2, Go's syntax (:func:`karmactl.api.regex.compile_user_regex`), as Karmada compiles
        ``--skipped-propagating-namespaces``.

        Raises:
            SettingsError: a value that does not parse; ``field`` is its key.
        """
        s = cls(extra=data)

        def num(key, default):
            if key not in data:
                return default
            try:
                value = parse_duration(data[key])
            except ValueError as exc:
                raise SettingsError(key, str(exc)) from None
            if value < 0:
                raise SettingsError(key, f'"{data[key]}" is negative (a duration >= 0 is expected)')
            return value

        def flag(key, default):
            if key not in data:
                return default
            v = str(data[key]).strip().lower()
            if v not in ("true", "false"):
                raise SettingsError(key, f'"{data[key]}" must be true or false')
            return v == "true"

        s.cluster_failover = flag("clusterFailover", s.cluster_failover)
        s.policy_preemption = flag("propagationPolicyPreemption", s.policy_preemption)
        s.stateful_failover_injection = flag("statefulFailoverInjection", s.stateful_failover_injection)
        s.federated_quota_enforcement = flag("federatedQuotaEnforcement", s.federated_quota_enforcement)
        s.multiple_pod_templates_scheduling = flag("multiplePodTemplatesScheduling",
                                                   s.multiple_pod_templates_scheduling)
        s.priority_based_scheduling = flag("priorityBasedScheduling", s.priority_based_scheduling)
        s.workload_affinity = flag("workloadAffinity", s.workload_affinity)
        s.failure_threshold = num("clusterFailureThreshold", s.failure_threshold)
        s.success_threshold = num("clusterSuccessThreshold", s.success_threshold)
        s.status_update_frequency = num("clusterStatusUpdateFrequency", s.status_update_frequency)
        if s.status_update_frequency <= 0:
            raise ValueError(f'karmactl-config data.clusterStatusUpdateFrequency: "{data["clusterStatusUpdateFrequency"]}" '
                             "must be more than 0 seconds")
        s.graceful_eviction_timeout = num("gracefulEvictionTimeout", s.graceful_eviction_timeout)
        s.detect_failure_threshold = num("detectFailureThreshold", s.detect_failure_threshold)
        s.detect_success_threshold = num("detectSuccessThreshold", s.detect_success_threshold)
        if "noExecuteTaintEvictionPurgeMode" in data:
            mode = str(data["noExecuteTaintEvictionPurgeMode"])
            mode = {"Immediately": "Directly", "Graciously": "Gracefully"}.get(mode, mode)
            if mode not in ("Directly", "Gracefully"):
                raise SettingsError("noExecuteTaintEvictionPurgeMode", f'"{mode}" must be Directly or Gracefully')
            s.no_execute_purge_mode = mode
        for _attr, key, _env, kind in MEMBER_KNOBS:
            if key in data and str(data[key]).strip() != "":
                try:
                    member_knob(kind, data[key])
                except ValueError as exc:
                    raise SettingsError(key, str(exc)) from None
        if "skippedPropagatingNamespaces" in data:
            key = "skippedPropagatingNamespaces"
            s.skipped_namespaces = tuple(p.strip() for p in str(data[key]).split(",") if p.strip())
            for pattern in s.skipped_namespaces:
                try:
                    compile_user_regex(pattern, f"karmactl-config data.{key}", anchored=True)
                except RegexError as exc:
                    raise SettingsError(key, str(exc).split(": ", 1)[1]) from None
        return s


class SettingsError(ValueError):
    """A karmactl-config value that does not parse: ``field`` (the ``data`` key) and ``detail``;
    ``str()`` is ``karmactl-config data.<field>: <detail>``."""

    def __init__(self, field_name: str, detail: str):
        super().__init__(f"karmactl-config data.{field_name}: {detail}")
        self.field = field_name
        self.detail = detail


@dataclass
class StepContext:
    """What a controller step gets besides the snapshots and the clock.

    Attributes:
        settings: control-plane settings.
        warnings: human lines printed on stderr as ``warning: ...`` (first pass only is enough).
        events: one line per notable action (eviction, task dropped, suspended dispatch...), stderr.
        passes: the current pass number (1-based).
        observed: the member clusters whose workloads were read from the members in this run
            (online), or None (offline: the state directory's recorded observations are all there
            is). Time-based decisions take a Work's status as evidence only for these clusters.
        memo: per-step caches kept across the passes of one computation (a step keys its entry by
            its own name and checks inputs by identity: objects are never modified in place).
        interpreter: the resource interpreter of this computation
            (``karmactl.interpreter.Interpreter``: customizations before the native rules); None
            means the native rules of the ``karmactl.interpreter`` module.
    """

    settings: Settings
    warnings: list = field(default_factory=list)
    events: list = field(default_factory=list)
    passes: int = 1
    observed: frozenset | None = None
    memo: dict = field(default_factory=dict)
    interpreter: object = None

    def event(self, line: str) -> None:
        """Record an event once per run (passes repeat steps)."""
        if line not in self.events:
            self.events.append(line)

    def warn(self, line: str) -> None:
        if line not in self.warnings:
            self.warnings.append(line)
