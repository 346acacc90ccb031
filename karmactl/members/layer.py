"""The member-cluster layer one run uses: probe every member, then execute every Work.

``karmactl.reconcile.run`` calls :meth:`MemberLayer.probe` before the control plane runs (Cluster
status) and :meth:`MemberLayer.execute` after it (apply/delete Works, collect their status). Members
are served concurrently (at most ``concurrency`` at a time); each member gets its own client with a
per-request timeout and a rate limit, so a down or hanging member costs one timeout and never stops
the run: its failure lands in ``report.member_errors``.

Knobs (ConfigMap ``karmada-system/karmactl-config`` ``data``; the environment wins):

==========================  ==============================  =======
``memberRequestTimeout``    ``KARMACTL_MEMBER_TIMEOUT``     5s
``memberQPS``               ``KARMACTL_MEMBER_QPS``         50
``memberConcurrency``       ``KARMACTL_MEMBER_CONCURRENCY`` 8
==========================  ==============================  =======
"""
from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from karmactl.api import constants as C
from karmactl.api.snapshot import Settings, Snapshot

CLUSTER = ("cluster.karmada.io", "Cluster")


@dataclass
class Knobs:
    """Per-run member settings: ``timeout`` seconds per request, ``qps`` per member, ``concurrency`` members at once."""

    timeout: float = 5.0
    qps: float = 50.0
    concurrency: int = 8


def knobs_of(settings_data: dict, environ=None) -> Knobs:
    """Member settings from the ConfigMap data and the environment (bad values are ignored)."""
    env = os.environ if environ is None else environ
    k = Knobs()
    for attr, cm_key, env_key, conv in (("timeout", "memberRequestTimeout", "KARMACTL_MEMBER_TIMEOUT", float),
                                        ("qps", "memberQPS", "KARMACTL_MEMBER_QPS", float),
                                        ("concurrency", "memberConcurrency", "KARMACTL_MEMBER_CONCURRENCY", int)):
        for raw in (settings_data.get(cm_key), env.get(env_key)):
            if raw is None or str(raw).strip() == "":
                continue
            try:
                value = conv(float(str(raw).strip().rstrip("s")))
            except ValueError:
                continue
            if value > 0 or attr == "qps":
                setattr(k, attr, value)
    return k


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
        self._knobs = Knobs()

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
        if name not in self._clients:
            try:
                access = resolve_access(cluster, self.state_dir, self.kubeconfig, self.environ)
                self._clients[name] = (MemberClient(access, self._knobs.timeout, self._knobs.qps), None)
            except AccessError as exc:
                self._clients[name] = (None, str(exc))
            except Exception as exc:  # noqa: BLE001 - the kubernetes config loader raises many types
                self._clients[name] = (None, f"{type(exc).__name__}: {exc}".replace("ConfigException: ", ""))
        return self._clients[name]

    def client_for(self, cluster: dict):
        """A fresh ``kubernetes.client.ApiClient`` for a Cluster (explicit context, retries 0), for
        callers that want the typed API (``karmactl/members/detection.py``); the caller closes it.

        Raises:
            MemberUnreachable: this run's probe already found the member unreachable (asking again
                would only cost another timeout).
            AccessError: no kubeconfig for the Cluster; the config loader's errors otherwise.
        """
        from kubernetes import client as kclient
        from kubernetes import config as kconfig

        from karmactl.members.clients import MemberUnreachable
        from karmactl.members.kubeconfig import resolve_access

        probe = self._probes.get((cluster.get("metadata") or {}).get("name"))
        if probe is not None and not probe.online:
            raise MemberUnreachable(probe.error or "cluster is not reachable")
        access = resolve_access(cluster, self.state_dir, self.kubeconfig, self.environ)
        cfg = kclient.Configuration()
        kconfig.load_kube_config(config_file=":".join(access.paths), context=access.context,
                                 client_configuration=cfg, persist_config=False)
        cfg.retries = 0
        return kclient.ApiClient(configuration=cfg)

    def _reset(self, snap: Snapshot) -> None:
        for client, _ in self._clients.values():
            if client is not None:
                client.close()
        self._clients, self._probes = {}, {}
        try:
            data = Settings.from_snapshot(snap).extra
        except ValueError:
            data = {}  # compute() reports the invalid settings
        self._knobs = knobs_of(data, self.environ)

    def _pool(self, n: int) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=max(1, min(self._knobs.concurrency, n)), thread_name_prefix="member")

    # ---------------------------------------------------------------------------------- probe

    def probe(self, snap: Snapshot, now: str, report) -> Snapshot:
        """Collect every Cluster's status (§4.1) into its overlay; returns a new snapshot.

        Members are probed concurrently; failures go to ``report.member_errors[cluster]``.
        Nothing changes in an overlay whose status did not change.
        """
        from karmactl.controllers import cluster_status
        from karmactl.members.probing import ProbeResult, probe_member, status_overlay

        self._reset(snap)
        try:
            settings = Settings.from_snapshot(snap)
        except ValueError:
            settings = Settings()
        keys = snap.keys_of_kind(*CLUSTER)
        clusters = {k: snap.user[k] for k in keys}

        def one(key):
            client, error = self._client(clusters[key])
            if client is None:
                return ProbeResult(client_error=error, error=f"failed to create a ClusterClient: {error}")
            return probe_member(client)

        with self._pool(len(keys)) as pool:
            results = dict(zip(keys, pool.map(one, keys)))
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
        return out

    # ---------------------------------------------------------------------------------- execute

    def execute(self, snap: Snapshot, now: str, report) -> Snapshot:
        """Apply/delete every Work on its member and collect status (§8, §9.5–§9.7).

        Returns a new snapshot: Works with ``Dispatching``/``Applied`` conditions and
        ``manifestStatuses``, terminating Works dropped once their member copy is gone. Terminating
        Works of a member that is not Ready stay; those of a Cluster that no longer exists are
        dropped (nothing is left to reach).
        """
        from karmactl import interpreter
        from karmactl.controllers.names import cluster_of_execution_namespace
        from karmactl.controllers.templates import merged_view
        from karmactl.members.executing import execute_member

        if not self._probes and not self._clients:
            self._reset(snap)
        clusters = {k[3]: merged_view(snap.user[k], snap.overlays.get(k)) for k in snap.keys_of_kind(*CLUSTER)}
        by_cluster: dict = {}
        out = snap.copy_computed()
        for wkey, work in snap.works.items():
            name = cluster_of_execution_namespace(wkey[2])
            if name is None:
                continue
            if name not in clusters:
                if (work.get("metadata") or {}).get("deletionTimestamp"):
                    out.set_work(wkey, None)
                continue
            by_cluster.setdefault(name, {})[wkey] = work
        names = sorted(by_cluster)
        total = sum(len(v) for v in by_cluster.values())
        bar = _Progress(total) if self.progress and total else None

        def one(name):
            cluster = clusters[name]
            ready = any(c.get("type") == C.COND_READY and c.get("status") == "True"
                        for c in (cluster.get("status") or {}).get("conditions") or [])
            probe = self._probes.get(name)
            client, error = self._client(cluster)
            reach_error = (probe.error if probe is not None and not probe.healthy else None) or \
                (f"failed to create a ClusterClient: {error}" if client is None else None)
            return execute_member(name, by_cluster[name], client, ready, reach_error, now, interpreter,
                                  bar.advance if bar else None, self.verbose)

        try:
            with self._pool(len(names)) as pool:
                outcomes = dict(zip(names, pool.map(one, names)))
        finally:
            if bar:
                bar.close()
        for name in names:
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
        return out

    def close(self) -> None:
        for client, _ in self._clients.values():
            if client is not None:
                client.close()
        self._clients = {}


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


__all__ = ["Knobs", "MemberLayer", "knobs_of"]
