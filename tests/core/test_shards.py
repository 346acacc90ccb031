"""Large offline runs are computed and written by two processes (``karmactl/incremental/shards.py``).
The files they write must be byte for byte what one process writes, run after run."""
from __future__ import annotations

import hashlib
import os
import shutil
import time

import pytest
from hypothesis import given, strategies as st

from karmactl import reconcile
from karmactl.api.snapshot import Snapshot
from karmactl.controllers.detector import DetectorConfig
from karmactl.incremental.shards import Sharding, shard_of, template_binding_key
from karmactl.incremental import runindex
from karmactl.incremental import sharded as shard_run
from karmactl.incremental.engine import index_tag
from karmactl.store.state import StateStore, change_list
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
    monkeypatch.setattr(shard_run, "SHARD_MIN_OBJECTS", 0 if sharded else 10**9)
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
    monkeypatch.setattr(shard_run, "SHARD_TEMPLATES", per_shard)
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
    monkeypatch.setattr(shard_run, "SHARD_MIN_OBJECTS", 0)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    _populate(tmp_path)
    snap = reconcile.load(StateStore(tmp_path))
    assert shard_run.shard_count(snap) == 2
    (tmp_path / "policies.yaml").write_text((tmp_path / "policies.yaml").read_text().replace(
        "metadata: {name: dup}\nspec:\n", "metadata: {name: dup}\nspec:\n  propagateDeps: true\n"))
    snap = reconcile.load(StateStore(tmp_path))
    assert shard_run.shard_count(snap) == 1


def test_a_sharded_run_leaves_an_index_that_vouches_for_its_files(tmp_path, monkeypatch):
    # the index records the files the shard processes wrote with the signatures taken as they
    # wrote them (TreeWriter.written): they must be what the files are after the commit
    monkeypatch.setattr(shard_run, "SHARD_TEMPLATES", 3)
    _populate(tmp_path)
    for f in tmp_path.rglob("*.yaml"):  # not "racily clean" (runindex.RACY_NS)
        os.utime(f, (time.time() - 60, time.time() - 60))
    first = _run(tmp_path, TIMES[0], True, monkeypatch)
    assert first.after is None and first.changes and first.incremental.startswith("full")
    index = runindex.read_index(tmp_path, index_tag())
    assert index.computed == runindex.computed_signatures(tmp_path)
    again = _run(tmp_path, TIMES[0], True, monkeypatch)
    assert again.incremental == "unchanged" and again.changes == []


# --------------------------------------------------------------------------- warm full runs
# A full run over a reconciled state (a Cluster changed) with the last run's index: the parent
# loads the shared computed files only, each shard process reads its own just before computing
# it (karmactl/incremental/shard_inputs.py). Its files must be those of a run without the index and of
# one process, and what it cannot vouch for must come out as it would without the index.

def _label_member1(root) -> None:
    parts = (root / "clusters.yaml").read_text().split("\n---\n")
    text = cluster_yaml("member1")
    assert "name: member1\n" in text
    parts[0] = text.replace("name: member1\n", "name: member1\n      labels: {edited: 'yes'}\n", 1)
    write(root / "clusters.yaml", "\n---\n".join(parts))


def _drop_index(root) -> None:
    for f in (root / ".karmactl").glob("run-index*.json"):
        f.unlink()


def _spy_sharded(monkeypatch) -> list:
    """Every call of shard_run.run_sharded: ``(works the parent holds, computed files left to the shards)``."""
    calls = []
    real = shard_run.run_sharded

    def spy(store, before, now, report, processes, index_parts=None, later=None, **kw):
        calls.append((len(before.works), list(later.rels) if later is not None else None))
        return real(store, before, now, report, processes, index_parts, later, **kw)

    monkeypatch.setattr(shard_run, "run_sharded", spy)
    return calls


def _reconciled_copies(tmp_path, monkeypatch, names):
    base = tmp_path / names[0]
    _populate(base)
    for f in base.rglob("*.yaml"):  # not "racily clean" (runindex.RACY_NS): the next plan trusts the files
        os.utime(f, (time.time() - 60, time.time() - 60))
    _run(base, TIMES[0], True, monkeypatch)
    out = [base]
    for name in names[1:]:
        shutil.copytree(base, tmp_path / name, symlinks=True)
        out.append(tmp_path / name)
    return out


@pytest.mark.parametrize("per_shard", [600, 3], ids=["two-shards", "shards-in-turn"])
def test_a_warm_full_run_reads_each_shards_files_in_that_shard(tmp_path, monkeypatch, per_shard):
    monkeypatch.setattr(shard_run, "SHARD_TEMPLATES", per_shard)
    warm, plain, one = _reconciled_copies(tmp_path, monkeypatch, ["warm", "plain", "one"])
    calls = _spy_sharded(monkeypatch)
    edits = [_label_member1, lambda root: _edit(root, 1), lambda root: _edit(root, 3)]  # a label; NotReady; Ready
    for step, (edit, now) in enumerate(zip(edits, TIMES[1:])):
        for root in (warm, plain, one):
            edit(root)
        _drop_index(plain)
        calls.clear()
        works = sum(1 for _ in (warm / "computed" / "works").rglob("*.json"))
        rw = _run(warm, now, True, monkeypatch)
        assert rw.incremental.startswith("full: ") and "index" not in rw.incremental, rw.incremental
        # one sharded computation, the shards' files left to them: Works, bindings and statuses
        assert len(calls) == 1, f"step {step}: computed again from the whole snapshot"
        works_in_parent, later = calls[0]
        assert later and {rel.split("/")[1] for rel in later} >= {"works", "resourcebindings", "status"}
        assert works_in_parent + sum(r.startswith("computed/works/") for r in later) == works
        rp = _run(plain, now, True, monkeypatch)
        assert calls[1][1] is None  # without an index, everything is loaded first, as before
        ro = _run(one, now, False, monkeypatch)
        assert rw.after is None and rp.after is None
        assert _digest(warm) == _digest(plain) == _digest(one), f"step {step}"
        assert rw.changes == rp.changes == ro.changes, f"step {step}"
        assert rw.warnings == rp.warnings and sorted(rw.warnings) == sorted(ro.warnings)
        assert rw.events == rp.events and sorted(rw.events) == sorted(ro.events)


def _owned_file(root, prefix: str) -> str:
    """A computed file under ``prefix`` that the index gives to one template's shard."""
    owners = runindex.computed_owners(root, runindex.read_index(root, index_tag()))
    return sorted(rel for rel, owner in owners.items() if rel.startswith(prefix) and owner != runindex.SHARED)[0]


@pytest.mark.parametrize("damage", ["bad-json", "not-an-object", "misplaced"])
def test_a_damaged_computed_file_in_a_shard_is_reported_as_a_load_reports_it(tmp_path, monkeypatch, capsys, damage):
    from karmactl.cli.main import main_exit_code

    monkeypatch.setattr(shard_run, "SHARD_TEMPLATES", 3)
    warm, plain = _reconciled_copies(tmp_path, monkeypatch, ["warm", "plain"])
    _drop_index(plain)
    rel = _owned_file(warm, "computed/works/")
    for root in (warm, plain):
        _label_member1(root)
        path = root / rel
        if damage == "bad-json":
            path.write_bytes(path.read_bytes()[:-20])
        elif damage == "not-an-object":
            path.write_text("[1, 2]\n")
        else:  # another Work's object at this path
            path.write_text(path.read_text().replace('"name": "', '"name": "x', 1))
    before = _digest(warm)
    calls = _spy_sharded(monkeypatch)
    outputs = []
    for root in (warm, plain):
        code = main_exit_code(["--state", str(root), "reconcile", "--offline", "--now", TIMES[1]])
        out = capsys.readouterr()
        outputs.append((code, out.out, out.err.replace(str(root), "<state>")))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 2 and rel in outputs[0][2]
    assert rel in calls[0][1]  # the damaged file was one a shard process read
    assert _digest(warm) == before and not list((warm / ".karmactl").glob("staging.*"))


def test_computed_files_the_index_cannot_vouch_for(tmp_path, monkeypatch):
    import json

    monkeypatch.setattr(shard_run, "SHARD_TEMPLATES", 3)
    warm, plain, one = _reconciled_copies(tmp_path, monkeypatch, ["warm", "plain", "one"])
    calls = _spy_sharded(monkeypatch)
    added = "computed/works/karmada-es-member1/added-by-hand.json"
    gone = ("apps", "Deployment", "team", "app4")  # its template removed: its status goes to every shard
    status_of_gone = StateStore(warm).computed_rel(gone)
    source = _owned_file(warm, "computed/works/karmada-es-member1/")
    for root in (warm, plain, one):
        _label_member1(root)
        work = json.loads((root / source).read_text())
        work["metadata"]["name"] = "added-by-hand"  # of a binding that does not exist: an orphan
        work["metadata"]["annotations"]["resourcebinding.karmada.io/name"] = "ghost-deployment"
        work["metadata"]["labels"]["resourcebinding.karmada.io/permanent-id"] = "0000-ghost"
        (root / added).write_text(json.dumps(work, indent=2) + "\n")
        (root / "apps" / "app4.yaml").unlink()
        assert (root / status_of_gone).exists()
    _drop_index(plain)
    rw = _run(warm, TIMES[1], True, monkeypatch)
    assert len(calls) == 1 and added not in calls[0][1] and status_of_gone not in calls[0][1]
    rp, ro = _run(plain, TIMES[1], True, monkeypatch), _run(one, TIMES[1], False, monkeypatch)
    assert _digest(warm) == _digest(plain) == _digest(one)
    assert rw.changes == rp.changes == ro.changes and ("delete", added) in rw.changes
    assert rw.warnings == rp.warnings and rw.events == rp.events

    # a Work edited by hand to name another binding: the index's owner is stale, the run is
    # computed from the whole snapshot, with the same outcome
    calls.clear()
    victim = _owned_file(warm, "computed/works/karmada-es-member3/")
    for root in (warm, plain):
        _edit(root, 1)
        work = json.loads((root / victim).read_text())
        ann = work["metadata"]["annotations"]
        ann["resourcebinding.karmada.io/name"] = "app9-deployment"
        ann["resourcebinding.karmada.io/namespace"] = "default"
        (root / victim).write_text(json.dumps(work, indent=2) + "\n")
    _drop_index(plain)
    rw = _run(warm, TIMES[2], True, monkeypatch)
    assert len(calls) == 2 and calls[0][1] and calls[1][1] is None  # tried, then from the whole snapshot
    rp = _run(plain, TIMES[2], True, monkeypatch)
    assert _digest(warm) == _digest(plain)
    assert rw.changes == rp.changes and rw.warnings == rp.warnings and rw.events == rp.events
    # (one process may differ here, with or without the index: a sharded run gives such a Work to
    # the shard of the binding its annotations name, not to that of the binding that renders it)


def test_a_claim_on_a_policy_its_shard_does_not_get(tmp_path, monkeypatch):
    # by-name lets go of app2 (still claimed: the claim on app2's status and binding, read in
    # app2's shard, would bring the policy there) while a Cluster changes: computed whole
    monkeypatch.setattr(shard_run, "SHARD_TEMPLATES", 3)
    warm, plain, one = _reconciled_copies(tmp_path, monkeypatch, ["warm", "plain", "one"])
    snap = reconcile.load(StateStore(warm))
    app2 = ("apps", "Deployment", "default", "app2")
    assert snap.overlays[app2]["metadata"]["annotations"]["propagationpolicy.karmada.io/name"] == "by-name"
    calls = _spy_sharded(monkeypatch)
    for root in (warm, plain, one):
        _label_member1(root)
        text = (root / "policies.yaml").read_text()
        (root / "policies.yaml").write_text(text.replace("kind: Deployment, name: app2}", "kind: Deployment, name: app10}"))
    _drop_index(plain)
    rw = _run(warm, TIMES[1], True, monkeypatch)
    assert len(calls) == 2 and calls[1][1] is None  # the claim did not fit: computed from the whole snapshot
    rp, ro = _run(plain, TIMES[1], True, monkeypatch), _run(one, TIMES[1], False, monkeypatch)
    assert _digest(warm) == _digest(plain) == _digest(one)
    assert rw.changes == rp.changes == ro.changes and rw.changes
    assert rw.warnings == rp.warnings and rw.events == rp.events


def test_a_damaged_file_in_one_shard_is_reported_while_another_shard_fails(tmp_path, monkeypatch):
    # two shards, one per process: the child's shard holds the damaged Work, the parent's shard
    # does not converge; a load reports the file before anything is computed, and so must this run
    from karmactl.incremental.runindex import binding_key_of_owner

    warm = _reconciled_copies(tmp_path, monkeypatch, ["warm"])[0]
    owners = runindex.computed_owners(warm, runindex.read_index(warm, index_tag()))
    rel = sorted(r for r, o in owners.items() if r.startswith("computed/works/") and o != runindex.SHARED
                 and shard_of(binding_key_of_owner(o), 2) == 1)[0]
    _label_member1(warm)
    (warm / rel).write_text("{")
    parent = os.getpid()
    real = reconcile.compute

    def compute(snap: Snapshot, now, report=None):
        if os.getpid() == parent:
            raise reconcile.NotConvergedError("the control plane did not converge after 10 passes")
        return real(snap, now, report)

    monkeypatch.setattr(reconcile, "compute", compute)
    before = _digest(warm)
    with pytest.raises(reconcile.InputError, match="cannot read computed file") as exc:
        _run(warm, TIMES[1], True, monkeypatch)
    assert exc.value.file == rel
    assert _digest(warm) == before and not list((warm / ".karmactl").glob("staging.*"))


@given(st.lists(st.tuples(st.integers(0, 3), st.tuples(*[st.text(max_size=3)] * 4), st.sampled_from(["write", "delete"]),
                          st.text(max_size=3))))
def test_the_change_list_is_in_index_then_key_order(staged):
    # state.change_list sorts by one string per change: the same order as by (index, key) tuples
    staged = [(i, tuple(p.replace("\0", "") for p in key), action, rel) for i, key, action, rel in staged]
    expected = [(action, rel) for _i, _k, action, rel in sorted(staged, key=lambda c: (c[0], c[1]))]
    assert change_list(staged) == expected
