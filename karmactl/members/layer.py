"""The member-cluster layer of online runs: probe, observe and act on every member.

It implements ``karmactl.reconcile.Members``: ``karmactl.reconcile.run`` calls :meth:`MemberLayer.probe`
(Cluster status and condition detection) and :meth:`MemberLayer.observe` (the status of every
member copy) before the control plane decides, :meth:`MemberLayer.act` after it (apply/delete
Works), then :meth:`MemberLayer.observe` again so the status it writes is what the members showed
after this run's own changes. Members
are served concurrently (at most ``concurrency`` at a time); each member gets its own client with a
per-request timeout and a rate limit, so a down or hanging member costs one timeout and never stops
the run: its failure lands in ``report.member_errors``.

A Pull mode Cluster (``spec.syncMode: Pull``) is never contacted: not probed, read, written or
watched. Its Works are computed and written as for any Cluster and wait for the member's own
karmada-agent (a run warning says how many); its status is what was reported in its file or with
``karmactl cluster condition set`` (``karmactl/controllers/cluster_status.py``).

Knobs (ConfigMap ``karmada-system/karmactl-config`` ``data``, a value that does not parse is
refused, exit 2; the environment wins, a variable that does not parse is named in a warning):

==========================  ==============================  =======  ==========================================
``memberRequestTimeout``    ``KARMACTL_MEMBER_TIMEOUT``     5s       total seconds per request
``memberQPS``               ``KARMACTL_MEMBER_QPS``         0        requests per second per member (0: no limit)
``memberBurst``             ``KARMACTL_MEMBER_BURST``       60       requests let through at once when QPS > 0
``memberWorkers``           ``KARMACTL_MEMBER_WORKERS``     5        requests in flight per member
``memberConcurrency``       ``KARMACTL_MEMBER_CONCURRENCY`` 8        members served at once
``memberRetries``           ``KARMACTL_MEMBER_RETRIES``     10       times one request is sent again after 429/5xx
                                                                     with ``Retry-After`` (within its timeout)
==========================  ==============================  =======  ==========================================

QPS and burst are those of Karmada's ``--cluster-api-qps``/``--cluster-api-burst`` (one token
bucket per member, ``pkg/util/membercluster_client.go``); workers default to Karmada's
``--concurrent-work-syncs``. Why the QPS default is no limit: ``docs/member-clusters.md``.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from karmactl.api import constants as C
from karmactl.api.snapshot import Settings, Snapshot
from karmactl.members.clients import DEFAULT_BURST, DEFAULT_QPS, DEFAULT_TIMEOUT, DEFAULT_WORKERS, MAX_RETRY_AFTER
from karmactl.members.executing import MemberCopies

CLUSTER = ("cluster.karmada.io", "Cluster")


@dataclass
class Knobs:
    """Per-run member settings (see the module's table).

    Attributes:
        timeout: seconds per request; qps: requests per second per member (<= 0: no limit);
        burst: token bucket size; workers: requests in flight per member; concurrency: members at once;
        retries: times one request is sent again when the member answers ``Retry-After``.
    """

    timeout: float = DEFAULT_TIMEOUT
    qps: float = DEFAULT_QPS
    burst: int = DEFAULT_BURST
    workers: int = DEFAULT_WORKERS
    concurrency: int = 8
    retries: int = MAX_RETRY_AFTER


def knobs_of(settings_data: dict, environ=None, warnings: list | None = None) -> Knobs:
    """Member settings from the ConfigMap data and the environment (the environment wins; an empty
    value counts as unset). The keys and their checks are ``karmactl.api.snapshot.MEMBER_KNOBS``.

    A ConfigMap value that does not parse never gets here (``Settings.from_snapshot`` refuses it,
    exit 2). An environment variable that does not parse is not used: a line saying so, naming the
    variable and the value used instead, goes to ``warnings``.
    """
    from karmactl.api.snapshot import MEMBER_KNOBS, member_knob

    env = os.environ if environ is None else environ
    k = Knobs()
    for attr, cm_key, env_key, kind in MEMBER_KNOBS:
        raw = settings_data.get(cm_key)
        if raw is not None and str(raw).strip() != "":
            setattr(k, attr, member_knob(kind, raw))
        raw = env.get(env_key)
        if raw is not None and str(raw).strip() != "":
            try:
                setattr(k, attr, member_knob(kind, raw))
            except ValueError as exc:
                if warnings is not None:
                    warnings.append(f"environment variable {env_key}: {exc}; using {getattr(k, attr):g}")
    return k


def _connection_of(cluster: dict) -> tuple:
    """What a member client is built from in a Cluster: its spec (endpoint, proxy, TLS, sync mode,
    secret references) and annotations (the kubeconfig and context it names); a change of status,
    labels or taints keeps the client."""
    spec = {k: v for k, v in (cluster.get("spec") or {}).items() if k != "taints"}
    return spec, ((cluster.get("metadata") or {}).get("annotations") or {})


class MemberLayer:
    """Talks to member clusters for one or more runs (a ``reconcile --wait`` reuses it).

    Args:
        state_dir: the state directory (relative kubeconfig annotations resolve against it).
        kubeconfig: the ``--kubeconfig`` fallback, or None (then ``KUBECONFIG``).
        progress: show a progress bar on stderr (only when stderr is a terminal).
        verbose: ``-v`` level (adds one event line per member write).
        environ: the environment (default ``os.environ``).
    """

    def __init__(self, state_dir: Path | str, kubeconfig: str | None = None, progress: bool = False,
                 verbose: int = 0, environ: dict | None = None):
        self.state_dir = Path(state_dir)
        self.kubeconfig = kubeconfig
        self.progress = progress
        self.verbose = verbose
        self.environ = os.environ if environ is None else environ
        self._clients: dict = {}
        self._probes: dict = {}
        self._copies: dict = {}
        self._observed: frozenset | None = None
        self._knobs = Knobs()
        self._probe_memo: tuple = (None, {})  # (now, {Cluster key: (Cluster, ProbeResult)}) of the last probe
        self.reuse_probe_at: str | None = None
        """The clock of a probe whose answers the next :meth:`probe` at that clock may use again."""
        self._knob_warnings: list = []
        self._made: dict = {}  # cluster name -> (monotonic time its client was made, _connection_of its Cluster)
        self.client_ttl = 0.0
        """Seconds a member's client is kept from one run to the next while its Cluster and the
        knobs stay the same (the continuous loop: a client costs a kubeconfig read and a TLS
        context loading the system's CAs, some 50 ms); 0: new clients each run."""
        self.targeted = False
        """Read member copies one GET each instead of one LIST per kind (:meth:`targeted_members`)."""

    @classmethod
    def from_context(cls, c) -> "MemberLayer":
        """The layer for a CLI context (``karmactl.cli.context.Context``: state, verbosity, tty)."""
        return cls(c.state, kubeconfig=getattr(c, "kubeconfig", None), progress=bool(c.stderr_tty),
                   verbose=int(getattr(c, "verbose", 0) or 0))

    # ---------------------------------------------------------------------------------- clients

    def _client(self, cluster: dict):
        """(client, error): the member's client, built once per run."""
        from karmactl.members.clients import MemberClient
        from karmactl.members.kubeconfig import AccessError, resolve_access

        name = cluster["metadata"]["name"]
        made_of = _connection_of(cluster)
        if name in self._clients and self._made.get(name, (0.0, made_of))[1] != made_of:
            self._drop_client(name)  # its Cluster's connection changed since the client was kept
        if name not in self._clients:
            self._made[name] = (time.monotonic(), made_of)
            try:
                access = resolve_access(cluster, self.state_dir, self.kubeconfig, self.environ)
                k = self._knobs
                self._clients[name] = (MemberClient(access, k.timeout, k.qps, k.burst, k.workers, k.retries), None)
            except AccessError as exc:
                self._clients[name] = (None, str(exc))
            except Exception as exc:  # noqa: BLE001 - the kubernetes config loader raises many types
                self._clients[name] = (None, f"{type(exc).__name__}: {exc}".replace("ConfigException: ", ""))
        return self._clients[name]

    def watch_client(self, cluster: dict, streams: int):
        """A new :class:`~karmactl.members.clients.MemberClient` of a Cluster for ``streams``
        long-lived watches (``karmactl/members/watching.py``): the same kubeconfig rules, knobs and
        keys in memory as this layer's clients, its own connection pool (a watch holds a
        connection for minutes); the caller closes it.

        Raises:
            AccessError: no usable kubeconfig for the Cluster (the message says why).
            Exception: from the kubernetes config loader.
        """
        from karmactl.controllers.helper.cluster import is_pull
        from karmactl.members.clients import MemberClient
        from karmactl.members.kubeconfig import AccessError, resolve_access

        if is_pull(cluster):
            raise AccessError(f"cluster {cluster['metadata']['name']} is a Pull mode member cluster: never contacted")
        access = resolve_access(cluster, self.state_dir, self.kubeconfig, self.environ)
        k = self._knobs
        return MemberClient(access, k.timeout, k.qps, k.burst, max(1, streams), k.retries)

    def client_for(self, cluster: dict):
        """This run's :class:`~karmactl.members.clients.MemberClient` of a Cluster, for callers that
        probe more (``karmactl/members/detection.py``); the layer owns and closes it. One client per
        member per run: one kubeconfig load, keys in memory only, the same timeouts and rate limit.

        Raises:
            MemberUnreachable: this run's probe already found the member unreachable (asking again
                would only cost another timeout).
            AccessError: no usable kubeconfig for the Cluster (the message says why).
        """
        from karmactl.members.clients import MemberUnreachable
        from karmactl.members.kubeconfig import AccessError

        probe = self._probes.get((cluster.get("metadata") or {}).get("name"))
        if probe is not None and not probe.online:
            raise MemberUnreachable(probe.error or "cluster is not reachable")
        client, error = self._client(cluster)
        if client is None:
            raise AccessError(error)
        return client

    def _reset(self, snap: Snapshot) -> None:
        """A new run over ``snap``: its knobs, no probe or copy yet, new clients (but those
        :attr:`client_ttl` keeps)."""
        try:
            data = Settings.from_snapshot(snap).extra
        except ValueError:
            data = {}  # compute() reports the invalid settings
        self._knob_warnings = []
        knobs = knobs_of(data, self.environ, self._knob_warnings)
        now = time.monotonic()
        for name in list(self._clients):
            if (knobs != self._knobs or self._clients[name][0] is None
                    or now - self._made.get(name, (0.0, None))[0] >= self.client_ttl):
                self._drop_client(name)
        self._knobs = knobs
        self._probes, self._copies, self._observed = {}, {}, None

    def _drop_client(self, name: str) -> None:
        client = self._clients.pop(name, (None, None))[0]
        self._made.pop(name, None)
        if client is not None:
            client.close()

    def _warn_knobs(self, report) -> None:
        for line in self._knob_warnings:
            if line not in report.warnings:
                report.warnings.append(line)

    def _pool(self, n: int):
        """A pool of ``min(concurrency, n)`` member workers that an interrupted run does not wait for
        (:func:`karmactl.members.clients.member_pool`)."""
        from karmactl.members.clients import member_pool

        return member_pool(min(self._knobs.concurrency, n), "member")

    # ---------------------------------------------------------------------------------- probe

    def probe(self, snap: Snapshot, now: str, report) -> Snapshot:
        """Collect every Cluster's status (§4.1) into its overlay; returns a new snapshot.

        Members are probed concurrently; failures go to ``report.member_errors[cluster]``.
        Nothing changes in an overlay whose status did not change. When :attr:`reuse_probe_at`
        equals ``now`` (set by the continuous loop, ``karmactl/continuous.py``, for the pass a probe
        called for, run at the probe's clock), the answers of that probe are used again for the
        Clusters unchanged since, once: a hung member would otherwise cost its timeout twice.
        """
        from karmactl.controllers import cluster_status
        from karmactl.controllers.helper.cluster import is_pull
        from karmactl.members.kubeconfig import connection_warnings
        from karmactl.members.probing import ProbeResult, probe_member, status_overlay

        self._reset(snap)
        self._warn_knobs(report)
        try:
            settings = Settings.from_snapshot(snap)
        except ValueError:
            settings = Settings()
        for key in snap.keys_of_kind(*CLUSTER):
            for line in connection_warnings(snap.user[key]):
                if line not in report.warnings:
                    report.warnings.append(line)
        keys = [k for k in snap.keys_of_kind(*CLUSTER) if not is_pull(snap.user[k])]  # Pull: the agent reports
        clusters = {k: snap.user[k] for k in keys}

        memo_now, memo = self._probe_memo if self.reuse_probe_at == now else (None, {})
        self.reuse_probe_at = None

        def one(key):
            if memo_now == now and key in memo and memo[key][0] == clusters[key]:
                return memo[key][1]
            client, error = self._client(clusters[key])
            if client is None:
                return ProbeResult(client_error=error, error=f"failed to create a ClusterClient: {error}")
            return probe_member(client)

        with self._pool(len(keys)) as pool:
            results = dict(zip(keys, pool.map(one, keys)))
        self._probe_memo = (now, {key: (clusters[key], results[key]) for key in keys})
        out = snap.copy_computed()
        for key in keys:
            result = results[key]
            self._probes[key[3]] = result
            # a report written in the Cluster's file is folded in first, so the probe is the newest
            overlay = cluster_status.ingest_file_status(key, clusters[key], out.overlays.get(key), now)
            out.set_overlay(key, status_overlay(key, clusters[key], overlay, result, now,
                                                settings.success_threshold, settings.failure_threshold))
            if result.error:
                report.member_errors[key[3]] = result.error
        # cluster condition detection for Remedy (karmactl/members/detection.py)
        from karmactl.members.detection import detect_conditions
        return detect_conditions(out, now, report, self.client_for, self.state_dir, self.environ)

    # ---------------------------------------------------------------------------------- observe / act

    def _works_by_cluster(self, snap: Snapshot, out: Snapshot, report=None) -> tuple[dict, dict]:
        """(Push Cluster name -> Cluster as seen by the control plane, name -> {Work key: Work}).
        Terminating Works of a Cluster that no longer exists are dropped from ``out``. The Works of
        Pull mode Clusters are left as they are, and with ``report`` a warning per such Cluster says
        how many wait for its agent."""
        from karmactl.api.names import cluster_of_execution_namespace
        from karmactl.api.templates import merged_view
        from karmactl.controllers.helper.cluster import is_pull

        keys = snap.keys_of_kind(*CLUSTER)
        pull = {k[3] for k in keys if is_pull(snap.user[k])}
        clusters = {k[3]: merged_view(snap.user[k], snap.overlays.get(k)) for k in keys if k[3] not in pull}
        by_cluster: dict = {}
        waiting: dict = {}
        for wkey, work in snap.works.items():
            name = cluster_of_execution_namespace(wkey[2])
            if name is None:
                continue
            if name in pull:
                waiting[name] = waiting.get(name, 0) + 1
                continue
            if name not in clusters:
                if (work.get("metadata") or {}).get("deletionTimestamp"):
                    out.set_work(wkey, None)
                continue
            by_cluster.setdefault(name, {})[wkey] = work
        for name in sorted(waiting) if report is not None else ():
            line = pull_warning(name, waiting[name])
            if line not in report.warnings:
                report.warnings.append(line)
        return clusters, by_cluster

    def _reach_error(self, cluster: dict) -> str | None:
        """Why this run does not talk to the member (its probe failed, or no client), else None."""
        name = cluster["metadata"]["name"]
        probe = self._probes.get(name)
        client, error = self._client(cluster)
        if probe is not None and not probe.healthy:
            return probe.error or "cluster is not reachable"
        return f"failed to create a ClusterClient: {error}" if client is None else None

    def _merge(self, out: Snapshot, outcomes: dict, report) -> None:
        for name in sorted(outcomes):
            oc = outcomes[name]
            for wkey, new in sorted(oc.works.items()):
                out.set_work(wkey, new)
            for line in oc.events:
                if line not in report.events:
                    report.events.append(line)
            for line in oc.warnings:
                if line not in report.warnings:
                    report.warnings.append(line)
            if oc.error and name not in report.member_errors:
                report.member_errors[name] = oc.error
            report.member_writes += oc.writes
            report.member_changes.extend(oc.changes)

    def observe(self, snap: Snapshot, now: str, report) -> Snapshot:
        """Read every member copy of every Work and record its status as observed at ``now``
        (``pkg/controllers/status/work_status_controller.go``, §9.7), and collect the EndpointSlices
        of MultiClusterService providers (``karmactl/members/endpointslices.py``).

        Members whose probe failed this run are not read, and are not in
        :meth:`observed_clusters`: what their Works say is from an earlier run. Returns a new
        snapshot; the copies read are kept for :meth:`act` in this run.
        """
        from karmactl.interpreter import Interpreter
        from karmactl.members.clients import MemberUnreachable
        from karmactl.members.endpointslices import collect_member
        from karmactl.members.executing import MemberOutcome, observe_member

        if not self._probes and not self._clients:
            self._reset(snap)
            self._warn_knobs(report)
        out = snap.copy_computed()
        interpreter = Interpreter.for_snapshot(snap, now)
        clusters, by_cluster = self._works_by_cluster(snap, out, report)
        names = [n for n in sorted(by_cluster) if self._reach_error(clusters[n]) is None]

        copies_of = TargetedCopies if self.targeted else MemberCopies

        def one(name):
            copies = copies_of(self._client(clusters[name])[0])
            try:
                oc = observe_member(by_cluster[name], copies, now, interpreter)
                # a MultiClusterService provider: its EndpointSlices (endpointslice_collect_controller.go)
                collected, warning = collect_member(name, by_cluster[name], copies, now)
                oc.works.update(collected)
                if warning:
                    oc.warnings.append(warning)
            except MemberUnreachable as exc:
                self._copies.pop(name, None)
                return MemberOutcome(error=f"cluster is not reachable: {exc}")
            self._copies[name] = copies
            return oc

        self._copies = {}
        with self._pool(len(names)) as pool:
            outcomes = dict(zip(names, pool.map(one, names)))
        self._observed = frozenset(n for n in names if n in self._copies) | frozenset(
            n for n in clusters if n not in by_cluster and self._reach_error(clusters[n]) is None)
        self._merge(out, outcomes, report)
        _warn_failures(interpreter, report)
        return out

    def observed_clusters(self) -> frozenset | None:
        """The members whose workloads the last :meth:`observe` read (its status is of this run)."""
        return self._observed

    def act(self, snap: Snapshot, now: str, report, dry_run: bool = False) -> Snapshot:
        """Apply or delete every Work on its member (§8, §9.5–§9.6), from the copies the last
        :meth:`observe` read. Returns a new snapshot: Works with their ``Applied`` condition and
        version record, terminating Works dropped once their member copy is gone. Terminating Works
        of a member that is not Ready stay; those of a Cluster that no longer exists are dropped.

        With ``dry_run`` nothing is sent and ``report.member_changes`` lists what would be.
        """
        from karmactl.interpreter import Interpreter
        from karmactl.members.executing import act_member

        if not self._probes and not self._clients:
            self._reset(snap)
            self._warn_knobs(report)
        out = snap.copy_computed()
        interpreter = Interpreter.for_snapshot(snap, now)
        clusters, by_cluster = self._works_by_cluster(snap, out)
        names = sorted(by_cluster)
        total = sum(len(v) for v in by_cluster.values())
        bar = _Progress(total) if self.progress and total and not dry_run else None

        def one(name):
            cluster = clusters[name]
            ready = any(c.get("type") == C.COND_READY and c.get("status") == "True"
                        for c in (cluster.get("status") or {}).get("conditions") or [])
            reach_error = self._reach_error(cluster)
            copies = self._copies.get(name)
            if copies is None and reach_error is None:
                copies = (TargetedCopies if self.targeted else MemberCopies)(self._client(cluster)[0])
            return act_member(name, by_cluster[name], copies, ready, reach_error, now, interpreter,
                              bar.advance if bar else None, self.verbose, dry_run, self._knobs.workers)

        try:
            with self._pool(len(names)) as pool:
                outcomes = dict(zip(names, pool.map(one, names)))
        finally:
            if bar:
                bar.close()
        self._copies = {}  # written to: the next observe lists again
        self._merge(out, outcomes, report)
        _warn_failures(interpreter, report)
        return out

    def close(self) -> None:
        for name in list(self._clients):
            self._drop_client(name)

    def targeted_members(self) -> "TargetedMembers":
        """This layer for a pass over a few bindings (:class:`TargetedMembers`)."""
        return TargetedMembers(self)


class TargetedMembers:
    """``karmactl.reconcile.Members`` for a partial pass of the continuous loop
    (``karmactl.reconcile.run_online_pass``): the Works of a few bindings, each member copy read
    with one GET (:class:`TargetedCopies`) instead of a LIST of the kind over the whole member, and
    no probe: the Clusters' status is the last pass's, which the loop's own probes every
    ``clusterStatusUpdateFrequency`` keep (a change there is a full pass). Members the last probe
    found unreachable are not contacted (``report.member_errors`` says so)."""

    def __init__(self, layer: MemberLayer):
        self.layer = layer

    def probe(self, snap: Snapshot, now: str, report) -> Snapshot:
        for name, result in sorted(self.layer._probes.items()):
            if result.error and name not in report.member_errors:
                report.member_errors[name] = result.error
        return snap

    def observe(self, snap: Snapshot, now: str, report) -> Snapshot:
        return self._targeted(self.layer.observe, snap, now, report)

    def observed_clusters(self) -> frozenset | None:
        return self.layer.observed_clusters()

    def act(self, snap: Snapshot, now: str, report, dry_run: bool = False) -> Snapshot:
        return self._targeted(self.layer.act, snap, now, report, dry_run)

    def _targeted(self, method, *args):
        self.layer.targeted = True
        try:
            return method(*args)
        finally:
            self.layer.targeted = False

    def close(self) -> None:
        pass


class TargetedCopies(MemberCopies):
    """:class:`~karmactl.members.executing.MemberCopies` (the member copies of this pass, kept up
    to date with its writes) whose copies are each read with their own GET when first asked for (a
    404 is remembered as absent): for a pass over a few Works, where one LIST of a kind would read
    every copy of the member."""

    def objects(self, r) -> dict:
        """The copies of resource ``r`` read so far, by (namespace, name); None for those absent."""
        with self._lock:
            return self.index.setdefault(r.path(), {})

    def get(self, r, namespace: str, name: str) -> dict | None:
        items = self.objects(r)
        key = (namespace if r.namespaced else "", name)
        if key in items:
            return items[key]
        obj = self.client.call("GET", r.path(key[0] or None, name), ok_missing=True)
        if obj is not None:
            obj.setdefault("apiVersion", r.group_version)
            obj.setdefault("kind", r.kind)
        with self._lock:
            return items.setdefault(key, obj)

    def remember(self, r, namespace: str, name: str, obj: dict | None) -> None:
        items = self.objects(r)
        with self._lock:
            items[(namespace if r.namespaced else "", name)] = obj


def pull_warning(cluster: str, works: int) -> str:
    """The run warning for a Pull mode Cluster with ``works`` Works (see the module docstring)."""
    from karmactl.api.names import execution_namespace

    return (f"cluster {cluster} is a Pull mode member cluster: karmactl applies none of its {works} Work(s) "
            f"(namespace {execution_namespace(cluster)}); they wait for the member's own karmada-agent")


class _Progress:
    """A transient rich progress bar on stderr (callers create it only for a terminal)."""

    def __init__(self, total: int):
        import threading

        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._lock = threading.Lock()
        self._p = Progress(TextColumn("executing works"), BarColumn(), MofNCompleteColumn(),
                           console=Console(file=sys.stderr), transient=True)
        self._task = self._p.add_task("works", total=total)
        self._p.start()

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self._p.advance(self._task, n)

    def close(self) -> None:
        self._p.stop()


__all__ = ["Knobs", "MemberLayer", "TargetedCopies", "TargetedMembers", "knobs_of", "pull_warning"]


def _warn_failures(interpreter, report) -> None:
    """Customization scripts that failed on a member object, as run warnings (named, once)."""
    for line in interpreter.failures:
        if not any(line in w for w in report.warnings):
            report.warnings.append(line)
