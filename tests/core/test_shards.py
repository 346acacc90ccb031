"""Large offline runs are computed and written by two processes (``karmactl/controllers/shards.py``).
The files they write must be byte for byte what one process writes, run after run."""
from __future__ import annotations

import hashlib
import os
import time

import pytest

from karmactl import reconcile
from karmactl.api.snapshot import Snapshot
from karmactl.controllers.detector import DetectorConfig
from karmactl.controllers.shards import Sharding, shard_of, template_binding_key
from karmactl.store import runindex
from karmactl.store.state import StateStore
from tests.conftest import cluster_yaml, write

APPS = 24

POLICIES = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: weighted}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {tier: web}}}
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member1]}, weight: 1}
        - {targetCluster: {clusterNames: [member2]}, weight: 2}
        - {targetCluster: {clusterNames: [member3]}, weight: 1}
  failover:
    cluster: {purgeMode: Gracefully}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: dup}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {tier: batch}}}
  - {apiVersion: v1, kind: Service}
  - {apiVersion: v1, kind: ConfigMap}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: cluster-wide}
spec:
  resourceSelectors:
  - {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole}
  - {apiVersion: v1, kind: Namespace}
  placement:
    clusterAffinity: {clusterNames: [member1, member3]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: by-name}
spec:
  priority: 5
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: app2}
  - {apiVersion: apps/v1, kind: Deployment, name: app6}
  placement:
    clusterAffinity: {clusterNames: [member3]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: role-by-name}
spec:
  resourceSelectors:
  - {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: role3}
  placement:
    clusterAffinity: {clusterNames: [member2]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: images}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  overrideRules:
  - targetCluster: {clusterNames: [member2]}
    overriders:
      imageOverrider:
      - {component: Registry, operator: replace, value: mirror.example}
---
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {name: web, namespace: default}
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /a, pathType: Prefix, backend: {service: {name: svc1, port: {number: 80}}}}
      - {path: /b, pathType: Prefix, backend: {service: {name: svc2, port: {number: 80}}}}
      - {path: /c, pathType: Prefix, backend: {service: {name: svc3, port: {number: 80}}}}
      - {path: /d, pathType: Prefix, backend: {service: {name: svc5, port: {number: 80}}}}
      - {path: /e, pathType: Prefix, backend: {service: {name: svc6, port: {number: 80}}}}
---
apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: traffic}
spec:
  clusterAffinity: {clusterNames: [member1]}
  actions: [TrafficControl]
"""


def _app(i: int, replicas: int) -> str:
    tier = "web" if i % 3 else "batch"
    ns = "default" if i % 4 else "team"
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app{i}, namespace: {ns}, labels: {{tier: {tier}}}}}
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
      - {{name: main, image: docker.io/app{i}:1, resources: {{requests: {{cpu: 100m}}}}}}
---
apiVersion: v1
kind: Service
metadata: {{name: svc{i}, namespace: {ns}}}
spec:
  ports: [{{port: 80}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: cm{i}, namespace: {ns}}}
data: {{n: "{i}"}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: role{i}}}
rules: []
"""


def _populate(root):
    clusters = "\n---\n".join(cluster_yaml(f"member{i}") for i in (1, 2, 3))
    write(root / "clusters.yaml", clusters)
    write(root / "policies.yaml", POLICIES)
    write(root / "ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n")
    for i in range(APPS):
        write(root / "apps" / f"app{i}.yaml", _app(i, 2 + i % 5))


def _digest(root) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / "computed").rglob("*")) if p.is_file()}


def _run(root, now: str, sharded: bool, monkeypatch) -> reconcile.RunReport:
    monkeypatch.setattr(reconcile, "SHARD_MIN_OBJECTS", 0 if sharded else 10**9)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    return reconcile.run(StateStore(root), reconcile.RunOptions(now=now))


def _edit(root, step: int):
    if step == 1:  # member2 fails: taints, then eviction
        text = (root / "clusters.yaml").read_text()
        parts = text.split("\n---\n")
        parts[1] = cluster_yaml("member2", ready="False")
        (root / "clusters.yaml").write_text("\n---\n".join(parts))
    elif step == 2:  # scale some apps, delete others, add a new one
        for i in range(0, APPS, 5):
            write(root / "apps" / f"app{i}.yaml", _app(i, 9))
        for i in range(1, APPS, 7):
            (root / "apps" / f"app{i}.yaml").unlink()
        write(root / "apps" / "late.yaml", _app(100, 4))
        # a policy that names its templates lets go of app2 (still claimed: the claim is what
        # brings the policy to app2's shard) and names app10 instead
        text = (root / "policies.yaml").read_text()
        (root / "policies.yaml").write_text(text.replace("kind: Deployment, name: app2}", "kind: Deployment, name: app10}"))
    elif step == 3:  # member2 back
        text = (root / "clusters.yaml").read_text()
        parts = text.split("\n---\n")
        parts[1] = cluster_yaml("member2")
        (root / "clusters.yaml").write_text("\n---\n".join(parts))


TIMES = ["2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:05:00Z", "2026-01-01T00:30:00Z"]


@pytest.mark.parametrize("per_shard", [600, 3], ids=["two-shards", "shards-in-turn"])
def test_sharded_runs_write_what_one_process_writes(tmp_path, monkeypatch, per_shard):
    # 600: one shard per process; 3: each process computes several shards one after the other
    monkeypatch.setattr(reconcile, "SHARD_TEMPLATES", per_shard)
    one, two = tmp_path / "one", tmp_path / "two"
    _populate(one)
    _populate(two)
    for step, now in enumerate(TIMES):
        _edit(one, step)
        _edit(two, step)
        r1 = _run(one, now, False, monkeypatch)
        r2 = _run(two, now, True, monkeypatch)
        assert r2.after is None  # it really took the sharded path
        assert _digest(one) == _digest(two), f"step {step}"
        assert r1.changes == r2.changes and r1.changes, f"step {step}"
        assert sorted(r1.warnings) == sorted(r2.warnings) and sorted(r1.events) == sorted(r2.events)
    digest = _digest(two)
    assert any("/works/karmada-es-member3/" in p for p in digest)
    assert any(p.startswith("computed/clusterresourcebindings/") for p in digest)
    # a run with nothing new writes nothing, sharded or not
    assert _run(two, TIMES[-1], True, monkeypatch).changes == []
    assert _run(one, TIMES[-1], False, monkeypatch).changes == []


def test_shards_split_templates_and_share_what_others_read(tmp_path, monkeypatch):
    _populate(tmp_path)
    _run(tmp_path, TIMES[0], False, monkeypatch)
    snap = reconcile.load(StateStore(tmp_path))
    sharding = Sharding(snap, 2, DetectorConfig())
    parts = [sharding.split(snap, i) for i in (0, 1)]
    deploys = [k for k in snap.user if k[1] == "Deployment"]
    for key in deploys:  # each Deployment is in exactly one shard, with its binding
        owners = [i for i, p in enumerate(parts) if key in p.user]
        assert owners == [shard_of(template_binding_key(key), 2)]
        if key[2] == "default":  # the policies are in "default"
            assert template_binding_key(key) in parts[owners[0]].bindings
            assert template_binding_key(key) not in parts[1 - owners[0]].bindings
    assert {shard_of(template_binding_key(k), 2) for k in deploys} == {0, 1}
    named = {("policy.karmada.io", "PropagationPolicy", "default", "by-name"),
             ("policy.karmada.io", "ClusterPropagationPolicy", "", "role-by-name")}
    for p in parts:  # what every shard needs
        assert all(k in p.user for k in snap.user if k[1] in ("Cluster", "PropagationPolicy", "Namespace",
                                                               "Service", "MultiClusterIngress") and k not in named)
    # a policy that names its templates goes only to their shards
    by_name, role_by_name = sorted(named)[1], sorted(named)[0]
    assert [i for i, p in enumerate(parts) if by_name in p.user] == sorted(
        {shard_of(template_binding_key(("apps", "Deployment", "default", n)), 2) for n in ("app2", "app6")})
    assert [i for i, p in enumerate(parts) if role_by_name in p.user] == [
        shard_of(template_binding_key(("rbac.authorization.k8s.io", "ClusterRole", "", "role3")), 2)]
    for p in parts:
        assert all(k in p.bindings for k, b in snap.bindings.items() if b["spec"]["resource"]["kind"] == "Service")


def test_an_error_in_one_shard_writes_nothing(tmp_path, monkeypatch):
    _populate(tmp_path)
    _run(tmp_path, TIMES[0], True, monkeypatch)
    before = _digest(tmp_path)
    for i in range(APPS):
        write(tmp_path / "apps" / f"app{i}.yaml", _app(i, 7))
    real = reconcile.compute

    def compute(snap: Snapshot, now, report=None):
        if any(k[3] == "app5" for k in snap.user):
            raise reconcile.NotConvergedError("the control plane did not converge after 10 passes")
        return real(snap, now, report)

    monkeypatch.setattr(reconcile, "compute", compute)
    with pytest.raises(reconcile.NotConvergedError):
        _run(tmp_path, TIMES[1], True, monkeypatch)
    assert _digest(tmp_path) == before
    assert not list((tmp_path / ".karmactl").glob("staging.*"))


def test_a_shard_process_that_dies_writes_nothing(tmp_path, monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    _populate(tmp_path)
    _run(tmp_path, TIMES[0], True, monkeypatch)
    before = _digest(tmp_path)
    for i in range(APPS):
        write(tmp_path / "apps" / f"app{i}.yaml", _app(i, 7))
    parent = os.getpid()
    real = reconcile.compute

    def compute(snap: Snapshot, now, report=None):
        if os.getpid() != parent:
            os._exit(9)  # as if killed
        return real(snap, now, report)

    monkeypatch.setattr(reconcile, "compute", compute)
    with pytest.raises(BrokenProcessPool):
        _run(tmp_path, TIMES[1], True, monkeypatch)
    assert _digest(tmp_path) == before
    assert not list((tmp_path / ".karmactl").glob("staging.*"))


def test_a_state_directory_with_propagate_deps_is_computed_whole(tmp_path, monkeypatch):
    # a workload and its ConfigMap may hash into different shards: the attached binding needs both
    monkeypatch.setattr(reconcile, "SHARD_MIN_OBJECTS", 0)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    _populate(tmp_path)
    snap = reconcile.load(StateStore(tmp_path))
    assert reconcile.shard_count(snap) == 2
    (tmp_path / "policies.yaml").write_text((tmp_path / "policies.yaml").read_text().replace(
        "metadata: {name: dup}\nspec:\n", "metadata: {name: dup}\nspec:\n  propagateDeps: true\n"))
    snap = reconcile.load(StateStore(tmp_path))
    assert reconcile.shard_count(snap) == 1


def test_a_sharded_run_leaves_an_index_that_vouches_for_its_files(tmp_path, monkeypatch):
    # the index records the files the shard processes wrote with the signatures taken as they
    # wrote them (TreeWriter.written): they must be what the files are after the commit
    monkeypatch.setattr(reconcile, "SHARD_TEMPLATES", 3)
    _populate(tmp_path)
    for f in tmp_path.rglob("*.yaml"):  # not "racily clean" (runindex.RACY_NS)
        os.utime(f, (time.time() - 60, time.time() - 60))
    first = _run(tmp_path, TIMES[0], True, monkeypatch)
    assert first.after is None and first.changes and first.incremental.startswith("full")
    index = runindex.read_index(tmp_path, reconcile._index_tag())
    assert index.computed == runindex.computed_signatures(tmp_path)
    again = _run(tmp_path, TIMES[0], True, monkeypatch)
    assert again.incremental == "unchanged" and again.changes == []
