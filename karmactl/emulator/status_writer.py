"""The status writer: the emulator's fake controller for a real kube-apiserver that runs no controllers.

``python -m karmactl.emulator.status_writer --name member1 --kubeconfig K --nodes 3 --ready-file F``
creates the Nodes the emulator creates (``<name>-node-<i>``, cpu 8, memory 32Gi, pods 110, Ready,
so Karmada's resource estimation sees capacity), then watches Deployments, StatefulSets, DaemonSets,
ReplicaSets and Jobs in every namespace and writes each one's ready status through its ``status``
subresource (a JSON merge patch), as the kube-controller-manager's controllers would once the
workload is running. The status is the emulator's (:func:`karmactl.emulator.hooks.ready_status`), so
both kinds of local member report the same thing; an object already showing it is not written again.

Once the Nodes exist it writes ``{"pid", "nodes"}`` to the ready file (atomically) so
:mod:`karmactl.emulator.local` can wait for it; it runs until SIGTERM/SIGINT. Pods are not handled
(a real server's Pods are scheduled and run by a kubelet, which a local member does not have).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading

from .hooks import _already, node_object, ready_status

# (group, version, plural) of the workloads whose status is written, as the fake controller's keys.
WATCHED = (("apps", "v1", "deployments"), ("apps", "v1", "statefulsets"), ("apps", "v1", "daemonsets"),
           ("apps", "v1", "replicasets"), ("batch", "v1", "jobs"))
WATCH_SECONDS = 300  # a watch is renewed (from the last resourceVersion) this often
RETRY_SECONDS = 1.0


def status_patch(group: str, plural: str, obj: dict, node_count: int) -> dict | None:
    """The merge patch that makes ``obj`` look ready (``{"status": {...}}``), or None when it already does.

    ``node_count`` is what a DaemonSet is scheduled on.
    """
    want = ready_status((group, plural), obj, node_count)
    if not want or _already(obj.get("status") or {}, want):
        return None
    return {"status": want}


class StatusWriter:
    """Creates Nodes and keeps workloads' status ready on one member.

    Args:
        api: a ``kubernetes.client.ApiClient`` for the member.
        name: the member's name (Node names are ``<name>-node-<i>``).
        nodes: how many Nodes to create.
        log: where to report failures (one line each).
    """

    def __init__(self, api, name: str, nodes: int, log=lambda line: print(line, file=sys.stderr, flush=True)):
        from kubernetes import client

        self.api, self.name, self.nodes, self.log = api, name, nodes, log
        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.stopping = threading.Event()

    def ensure_nodes(self) -> int:
        """Create the missing Nodes (status included: a Node's status may be set on create); returns
        how many Nodes the member has."""
        from kubernetes.client.rest import ApiException

        for i in range(1, self.nodes + 1):
            node = node_object(f"{self.name}-node-{i}")
            try:
                self.core.create_node(node)
            except ApiException as exc:
                if exc.status != 409:
                    raise
        return len(self.core.list_node().items)

    def write(self, group: str, version: str, plural: str, obj: dict, node_count: int) -> None:
        """Patch one object's status when it is not ready yet (a vanished object is skipped)."""
        from kubernetes.client.rest import ApiException

        patch = status_patch(group, plural, obj, node_count)
        if patch is None:
            return
        md = obj.get("metadata") or {}
        try:
            self.custom.patch_namespaced_custom_object_status(group, version, md.get("namespace", ""), plural,
                                                              md.get("name", ""), patch,
                                                              _content_type="application/merge-patch+json")
        except ApiException as exc:
            if exc.status not in (404, 409):
                self.log(f"{plural} {md.get('namespace')}/{md.get('name')}: status not written: {exc.status} {exc.reason}")

    def follow(self, group: str, version: str, plural: str, node_count: int) -> None:
        """List, then watch from the list's resourceVersion, writing status on every add and change;
        starts over after an error or an expired resourceVersion until :attr:`stopping` is set."""
        from kubernetes import watch

        while not self.stopping.is_set():
            try:
                listed = self.custom.list_cluster_custom_object(group, version, plural)
                for obj in listed.get("items") or []:
                    self.write(group, version, plural, obj, node_count)
                rv = (listed.get("metadata") or {}).get("resourceVersion")
                while not self.stopping.is_set():
                    w = watch.Watch()
                    for event in w.stream(self.custom.list_cluster_custom_object, group, version, plural,
                                          resource_version=rv, timeout_seconds=WATCH_SECONDS):
                        obj = event["object"]
                        if event["type"] == "ERROR":
                            raise RuntimeError(f"watch error: {obj.get('message') if isinstance(obj, dict) else obj}")
                        rv = (obj.get("metadata") or {}).get("resourceVersion") or rv
                        if event["type"] in ("ADDED", "MODIFIED"):
                            self.write(group, version, plural, obj, node_count)
                        if self.stopping.is_set():
                            w.stop()
            except Exception as exc:  # noqa: BLE001 - a member restarting or a 410: list again
                if self.stopping.is_set():
                    return
                self.log(f"{plural}: {type(exc).__name__}: {str(exc)[:200]}; listing again")
                self.stopping.wait(RETRY_SECONDS)

    def start(self, node_count: int) -> list[threading.Thread]:
        """One daemon thread per watched kind."""
        threads = [threading.Thread(target=self.follow, args=(*gvr, node_count), name=f"status-{gvr[2]}", daemon=True)
                   for gvr in WATCHED]
        for t in threads:
            t.start()
        return threads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m karmactl.emulator.status_writer")
    parser.add_argument("--name", required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--ready-file", required=True)
    args = parser.parse_args(argv)

    from kubernetes import client, config

    cfg = client.Configuration()
    config.load_kube_config(config_file=args.kubeconfig, client_configuration=cfg, persist_config=False)
    writer = StatusWriter(client.ApiClient(configuration=cfg), args.name, args.nodes)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    for _attempt in range(10):
        try:
            node_count = writer.ensure_nodes()
            break
        except Exception as exc:  # noqa: BLE001 - the server may still be settling
            writer.log(f"nodes: {type(exc).__name__}: {str(exc)[:200]}")
            if done.wait(RETRY_SECONDS):
                return 0
    else:
        return 1
    writer.start(node_count)
    tmp = args.ready_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"pid": os.getpid(), "nodes": args.nodes}, f)
    os.replace(tmp, args.ready_file)
    while not done.wait(0.5):
        pass
    writer.stopping.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())
