"""Application failover: evict a binding from clusters where its workload stays Unhealthy.

Follows ``pkg/controllers/applicationfailover/common.go``, ``rb_application_failover_controller.go``
and ``crb_application_failover_controller.go`` (semantics §6), plus what the design document
``proposals/application-failover.md`` adds and DESIGN §3.2 asks for: ``preConditions``
(``delaySeconds``, ``healthyState``), ``blockPredecessorSeconds`` with an active eviction history,
and ``settled``/``creationTimestamp`` of aggregated status items.

A binding is handled when ``spec.failover.application`` is set, ``status.aggregatedStatus`` is
non-empty, the template kind has an InterpretHealth hook, the binding is not being deleted and (RBs
only) ``spec.propagateDeps`` is true. Per ``aggregatedStatus`` item ``{clusterName, applied, health,
status, [creationTimestamp], [settled]}`` of a cluster in ``spec.clusters``:

* preconditions (design document): ``preConditions.delaySeconds`` -> only once ``now >=
  first collection + delaySeconds``; ``preConditions.healthyState: Healthy`` -> only clusters where the
  workload was once Healthy ("settled"). Until they hold no toleration window runs;
* ``health: Unhealthy`` and no eviction task for the cluster -> "unhealthy": the first observation
  records the time; once ``now >= first unhealthy + decisionConditions.tolerationSeconds`` (seconds,
  CRD default 300; 0 = at the next observation, i.e. the next pass) the cluster is evicted.
  ``Healthy``/``Unknown`` (which includes "not applied yet") reset the window;
* eviction = ``GracefulEvictCluster`` with ``reason: ApplicationFailure``, ``producer:
  resource-binding-application-failover-controller`` (``cluster-resource-binding-...`` for CRBs),
  ``purgeMode`` from the policy (default ``Gracefully``): ``Gracefully`` -> ``gracePeriodSeconds``
  (default 600), ``Never`` -> ``suppressDeletion: true``, ``Directly`` -> nothing extra; and an entry
  ``{clusterName, creationTimestamp: now}`` in the binding's active eviction history. The binding's
  generation is bumped; one event line per eviction.

Active eviction history (design document ``ActiveEvictionHistory``): the ClusterEviction scheduler
filter keeps a listed cluster out of new placements. Entries expire ``blockPredecessorSeconds``
(default 600; 0 = never) after their ``creationTimestamp``; this step removes expired entries (it
runs before the scheduler in every pass), with the default when the policy no longer has
``failover.application``. It lives in ``spec.activeEvictionHistory`` as the design document places
it; the detector keeps it when it refreshes a binding from its policy (like ``clusters`` and
``gracefulEvictionTasks``, it is owned by controllers, not by the policy).

State preservation (gate ``StatefulFailoverInjection``, ``settings.stateful_failover_injection``,
off by default as in Karmada): with ``failover.application.statePreservation.rules`` each evicted
cluster's task gets ``preservedLabelState`` read from that cluster's status item
(:func:`graceful_eviction.preserved_label_state`); the binding controller injects it into the
replacement's manifest. When the status was not collected or a path finds nothing, that cluster is
not evicted in this pass (upstream fails the whole update and retries) and a warning says why.

The aggregated status items carry the design document's ``creationTimestamp`` (first collection)
and ``settled`` (once Healthy): the binding status controller writes them
(``binding_status.py``). karmactl bookkeeping (upstream keeps the first-unhealthy time in process
memory, §6.2): the annotation ``karmactl.io/application-failover`` on the binding holds compact JSON
``{"<cluster>": {"unhealthySince": RFC3339}}`` while a toleration window runs. Annotations survive
the detector and the scheduler, and changing one does not bump the generation. This step never
writes into ``aggregatedStatus`` items. The annotation is removed when the binding is no longer
handled.
"""
from __future__ import annotations

import json

from karmactl.api import constants as C
from karmactl.api.objects import add_seconds, bump_generation, deepcopy, parse_time
from karmactl.controllers.helper.binding import binding_id, binding_ref, works_by_binding
from karmactl.controllers.helper.eviction import GATE_OFF_MESSAGE, graceful_evict_cluster, has_state_preservation, preserved_label_state
from karmactl.controllers.helper.work import observed_at

BOOKKEEPING_ANNOTATION = "karmactl.io/application-failover"
DEFAULT_TOLERATION_SECONDS = 300
DEFAULT_GRACE_PERIOD_SECONDS = 600
DEFAULT_BLOCK_PREDECESSOR_SECONDS = 600
HISTORY_FIELD = "activeEvictionHistory"


def _reached(start: str, seconds: float, now: str) -> bool:
    """``now >= start + seconds``."""
    return parse_time(now) >= parse_time(add_seconds(start, seconds))


def _valid_time(text) -> bool:
    try:
        parse_time(str(text))
    except (ValueError, TypeError):
        return False
    return True


def read_bookkeeping(binding: dict) -> dict:
    """The parsed bookkeeping annotation (``{}`` when absent or unreadable)."""
    raw = ((binding.get("metadata") or {}).get("annotations") or {}).get(BOOKKEEPING_ANNOTATION)
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _with_bookkeeping(binding: dict, record: dict) -> dict:
    """``binding`` with the annotation set to ``record`` (removed when empty); the same object if unchanged."""
    annotations = dict((binding.get("metadata") or {}).get("annotations") or {})
    if record:
        annotations[BOOKKEEPING_ANNOTATION] = json.dumps(record, sort_keys=True, separators=(",", ":"))
    else:
        annotations.pop(BOOKKEEPING_ANNOTATION, None)
    if annotations == ((binding.get("metadata") or {}).get("annotations") or {}):
        return binding
    metadata = dict(binding.get("metadata") or {})
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    else:
        metadata.pop("annotations", None)
    return dict(binding, metadata=metadata)


def block_seconds(binding: dict) -> float:
    """``failover.application.blockPredecessorSeconds`` (seconds; default 600; 0 = forever)."""
    app = ((binding.get("spec") or {}).get("failover") or {}).get("application") or {}
    value = app.get("blockPredecessorSeconds")
    return float(DEFAULT_BLOCK_PREDECESSOR_SECONDS if value is None else value)


def expire_history(binding: dict, now: str) -> dict:
    """``binding`` without history entries older than ``blockPredecessorSeconds`` (same object if none).

    Expiring entries changes the spec, so the generation is bumped as the API server would.
    """
    spec = binding.get("spec") or {}
    history = spec.get(HISTORY_FIELD)
    if not history:
        return binding
    block = block_seconds(binding)
    kept = [e for e in history
            if block == 0 or not _valid_time(e.get("creationTimestamp")) or not _reached(e["creationTimestamp"], block, now)]
    if kept == history:
        return binding
    new_spec = dict(spec)
    if kept:
        new_spec[HISTORY_FIELD] = kept
    else:
        del new_spec[HISTORY_FIELD]
    new = dict(binding, spec=new_spec, metadata=dict(binding.get("metadata") or {}))
    bump_generation(binding, new)
    return new


def handled(binding: dict, has_health_hook) -> bool:
    """The preconditions of §6.1 (see the module docs)."""
    spec = binding.get("spec") or {}
    if ((spec.get("failover") or {}).get("application")) is None:
        return False
    if (binding.get("metadata") or {}).get("deletionTimestamp"):
        return False
    if not (binding.get("status") or {}).get("aggregatedStatus"):
        return False
    resource = spec.get("resource") or {}
    if not has_health_hook(resource.get("apiVersion", ""), resource.get("kind", "")):
        return False
    return binding.get("kind") != "ResourceBinding" or spec.get("propagateDeps") is True


def _task_options(binding: dict, cluster: str | None = None, inject: bool = False) -> dict:
    """Task fields for an application failover eviction (``buildTaskOptions``); with ``inject``
    and ``statePreservation`` rules, ``preservedLabelState`` read from ``cluster``'s status item.

    Raises:
        ValueError: the state of ``cluster`` cannot be read (see :func:`preserved_label_state`).
    """
    app = binding["spec"]["failover"]["application"]
    mode = app.get("purgeMode") or "Gracefully"
    mode = {"Immediately": "Directly", "Graciously": "Gracefully"}.get(mode, mode)
    producer = (C.EVICTION_PRODUCER_RB_APP_FAILOVER if binding.get("kind") == "ResourceBinding"
                else C.EVICTION_PRODUCER_CRB_APP_FAILOVER)
    opts = {"purgeMode": mode, "reason": C.EVICTION_REASON_APPLICATION_FAILURE, "producer": producer}
    if mode == "Gracefully":
        grace = app.get("gracePeriodSeconds")
        opts["gracePeriodSeconds"] = int(DEFAULT_GRACE_PERIOD_SECONDS if grace is None else grace)
    elif mode == "Never":
        opts["suppressDeletion"] = True
    if inject and cluster is not None:
        state = preserved_label_state(app.get("statePreservation"), binding, cluster)
        if state is not None:
            opts["preservedLabelState"] = state
    return opts


def assess(binding: dict, now: str, has_health_hook, observed: frozenset | None = None,
           observed_at: dict | None = None, inject: bool = False,
           problems: list | None = None) -> tuple[dict, list[str]]:
    """One pass of application failover over one binding.

    Args:
        binding: an RB or CRB.
        now: RFC 3339.
        has_health_hook: ``f(apiVersion, kind) -> bool`` (the interpreter's InterpretHealth lookup).
        observed: the clusters whose workload status was read from the members in this run, or
            None (offline: the recorded observations are the evidence). An item of a cluster not
            observed in this run is no evidence either way: its window is neither started, nor
            reset, nor closed, so a member that cannot be reached is left to cluster failover.
        observed_at: cluster -> when the member first reported the status its Work now holds
            (``karmactl.io/observed-at``). A toleration window that starts now starts at that
            time when it is earlier (an Unhealthy status recorded by ``karmactl observe`` or by
            an earlier observation that still holds).
        inject: gate ``StatefulFailoverInjection``: tasks get ``preservedLabelState``.
        problems: receives one line per cluster whose eviction waits because its state could
            not be read.

    Returns:
        (the binding — the same object when nothing changed —, evicted cluster names, sorted).
    """
    new = expire_history(binding, now)
    if not handled(new, has_health_hook):
        return _with_bookkeeping(new, {}), []
    spec = new.get("spec") or {}
    toleration, delay, need_settled = _decision_rules(spec["failover"]["application"])
    targets = {t.get("name") for t in spec.get("clusters") or []}
    evicting = {t.get("fromCluster") for t in spec.get("gracefulEvictionTasks") or []}
    old_record = read_bookkeeping(new)
    record: dict = {}
    due: list[str] = []
    options: dict = {}
    for item in sorted(new["status"]["aggregatedStatus"], key=lambda i: i.get("clusterName") or ""):
        cluster = item.get("clusterName")
        if cluster not in targets:
            continue  # eviction-task and requiredBy clusters are not judged
        old = old_record.get(cluster) if isinstance(old_record.get(cluster), dict) else {}
        if observed is not None and cluster not in observed:
            if _valid_time(old.get("unhealthySince")):
                record[cluster] = {"unhealthySince": old["unhealthySince"]}
            continue
        entry: dict = {}
        if _ready_to_judge(item, now, delay, need_settled) and item.get("health") == C.UNHEALTHY and cluster not in evicting:
            since, first = _window_start(old, cluster, observed_at, now)
            if (first and since == now) or not _reached(since, toleration, now):
                entry["unhealthySince"] = since
            else:
                try:
                    options[cluster] = _task_options(new, cluster, inject)
                except ValueError as exc:  # the state to preserve is not readable yet: retry next pass
                    if problems is not None:
                        problems.append(f"eviction from {cluster} waits: {exc}")
                    record[cluster] = {"unhealthySince": since}
                    continue
                due.append(cluster)
                continue  # evicted: its bookkeeping goes with it
        if entry:
            record[cluster] = entry
    if due:
        new = _evicted(binding, new, due, options, now)
    return _with_bookkeeping(new, record), due


def _decision_rules(app: dict) -> tuple[float, object, bool]:
    """``(tolerationSeconds, preConditions.delaySeconds or None, whether preConditions.healthyState
    asks for a settled workload)`` of ``spec.failover.application``."""
    toleration = (app.get("decisionConditions") or {}).get("tolerationSeconds")
    toleration = float(DEFAULT_TOLERATION_SECONDS if toleration is None else toleration)
    pre = app.get("preConditions") or {}
    return toleration, pre.get("delaySeconds"), pre.get("healthyState") == C.HEALTHY


def _ready_to_judge(item: dict, now: str, delay, need_settled: bool) -> bool:
    """``preConditions``: ``delaySeconds`` passed since the status was collected, and the workload
    settled when ``healthyState`` asks for it."""
    # the binding status controller stamps both on the item; an item without them (written
    # by hand, or by an older karmactl) counts from now
    collected = item.get("creationTimestamp") if _valid_time(item.get("creationTimestamp")) else now
    settled = bool(item.get("settled") or item.get("health") == C.HEALTHY)
    return (delay is None or _reached(collected, float(delay), now)) and (settled or not need_settled)


def _window_start(old: dict, cluster: str, observed_at: dict | None, now: str) -> tuple[str, bool]:
    """``(unhealthySince, whether the window starts in this pass)`` of an unhealthy cluster."""
    since = old.get("unhealthySince") if _valid_time(old.get("unhealthySince")) else None
    if since is not None:
        return since, False
    # the window starts when the member began reporting this status (now, unless an
    # earlier observation that still holds says so)
    since = (observed_at or {}).get(cluster)
    return (since if _valid_time(since) and parse_time(since) < parse_time(now) else now), True


def _evicted(binding: dict, new: dict, due: list, options: dict, now: str) -> dict:
    """A copy of ``new`` with every ``due`` cluster gracefully evicted and recorded in the active
    eviction history."""
    new = deepcopy(new)
    history = [e for e in new["spec"].get(HISTORY_FIELD) or [] if e.get("clusterName") not in due]
    for cluster in due:
        graceful_evict_cluster(new["spec"], cluster, options[cluster])
        history.append({"clusterName": cluster, "creationTimestamp": now})
    new["spec"][HISTORY_FIELD] = history
    bump_generation(binding, new)
    return new


def step(loaded, out, now: str, ctx) -> bool:
    """Phase ``bindings``: application failover for every binding (module docs)."""
    from karmactl.interpreter import Interpreter


    has_health_hook = Interpreter.of(ctx).has_health_hook
    changed = False
    by_binding = None
    for bkey in sorted(out.bindings):
        binding = out.bindings[bkey]
        if not handled(binding, has_health_hook) and not read_bookkeeping(binding) \
                and not (binding.get("spec") or {}).get(HISTORY_FIELD):
            continue
        if by_binding is None:
            by_binding = works_by_binding(out.works)
        times = {cluster: observed_at(work) for cluster, work in by_binding.get(binding_id(binding), [])}
        inject = ctx.settings.stateful_failover_injection
        if not inject and has_state_preservation(binding, "application"):
            ctx.warn(f"{binding_ref(bkey)}: {GATE_OFF_MESSAGE.format(kind='application')}")
        problems: list = []
        new, evicted = assess(binding, now, has_health_hook, ctx.observed, times, inject, problems)
        for line in problems:
            ctx.warn(f"{binding_ref(bkey)}: {line}")
        if new is binding:
            continue
        for cluster in evicted:
            mode = next((t.get("purgeMode", "") for t in new["spec"].get("gracefulEvictionTasks") or []
                         if t.get("fromCluster") == cluster), "")
            ctx.event(f"evicted {binding_ref(bkey)} from {cluster}: {C.EVICTION_REASON_APPLICATION_FAILURE} (purgeMode {mode})")
        changed = out.set_binding(bkey, new) or changed
    return changed


def wake(snap, now: str, settings) -> list:
    """Bindings whose application failover reads the clock: a ``failover.application`` (toleration
    window, ``delaySeconds``), a running window (bookkeeping) or eviction history to expire.
    Conservatively each is due at every run (``now``): ``[(binding key, now)]``."""
    out = []
    for bkey, binding in snap.bindings.items():
        spec = binding.get("spec") or {}
        if (spec.get("failover") or {}).get("application") is not None or spec.get(HISTORY_FIELD) \
                or read_bookkeeping(binding):
            out.append((bkey, now))
    return out
