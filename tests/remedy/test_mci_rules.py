"""MultiClusterIngress status rules (semantics §7.2): service locations and traffic block lists."""
from __future__ import annotations

from karmactl.api.kinds import KindRegistry
from karmactl.api.snapshot import Settings, Snapshot, StepContext
from karmactl.controllers import multicluster_ingress as mci_ctl

MCI_KEY = ("networking.karmada.io", "MultiClusterIngress", "default", "web")


def backend(svc):
    return {"service": {"name": svc, "port": {"number": 80}}}


def mci(rules_services=("web",), default=None, status=None, ns="default"):
    spec = {"rules": [{"host": "a.example.com", "http": {"paths": [
        {"path": f"/{s}", "pathType": "Prefix", "backend": backend(s)} for s in rules_services]}}]}
    if default:
        spec["defaultBackend"] = backend(default)
    obj = {"apiVersion": "networking.karmada.io/v1alpha1", "kind": "MultiClusterIngress",
           "metadata": {"name": "web", "namespace": ns}, "spec": spec}
    if status is not None:
        obj["status"] = status
    return obj


def rb(svc, clusters=(), required_by=(), ns="default"):
    spec = {"resource": {"apiVersion": "v1", "kind": "Service", "name": svc, "namespace": ns},
            "clusters": [{"name": c} for c in clusters]}
    if required_by:
        spec["requiredBy"] = [{"name": "dep", "namespace": ns, "clusters": [{"name": c} for c in cl]} for cl in required_by]
    return (("work.karmada.io", "ResourceBinding", ns, f"{svc}-service"),
            {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
             "metadata": {"name": f"{svc}-service", "namespace": ns}, "spec": spec})


def test_backend_names_from_rules_and_default_backend_sorted_unique():
    obj = mci(("web", "api", "web"), default="zeta")
    obj["spec"]["rules"].append({"host": "b.example.com"})  # no http
    obj["spec"]["rules"][0]["http"]["paths"].append(
        {"path": "/r", "pathType": "Prefix", "backend": {"resource": {"kind": "Bucket", "name": "b"}}})
    assert mci_ctl.backend_service_names(obj) == ["api", "web", "zeta"]


def test_service_locations_union_of_clusters_and_required_by():
    bindings = dict([rb("web", ["member2", "member1"], [["member3", "member1"]]), rb("api", [])])
    locs = mci_ctl.service_locations(mci(("web", "api", "missing")), bindings)
    assert locs == [{"name": "api"}, {"name": "web", "clusters": ["member1", "member2", "member3"]}]


def test_service_locations_use_the_mci_namespace():
    bindings = dict([rb("web", ["member1"], ns="other")])
    assert mci_ctl.service_locations(mci(), bindings) == []
    assert mci_ctl.service_locations(mci(ns="other"), bindings) == [{"name": "web", "clusters": ["member1"]}]


def test_traffic_block_clusters_need_trafficcontrol_and_a_location():
    locs = [{"name": "a", "clusters": ["member1", "member2"]}, {"name": "b", "clusters": ["member3"]}]
    actions = {"member1": ["TrafficControl"], "member2": ["Other"], "member3": ["TrafficControl"],
               "member4": ["TrafficControl"]}
    assert mci_ctl.traffic_block_clusters(locs, actions) == ["member1", "member3"]
    assert mci_ctl.traffic_block_clusters(locs, {}) == []


def snapshot(cluster_actions: dict, bindings=(), obj=None):
    snap = Snapshot(KindRegistry.default())
    for name, actions in cluster_actions.items():
        key = ("cluster.karmada.io", "Cluster", "", name)
        snap.user[key] = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                          "metadata": {"name": name}, "spec": {"syncMode": "Push"}}
        if actions:
            snap.overlays[key] = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                                  "metadata": {"name": name}, "status": {"remedyActions": actions}}
    snap.user[MCI_KEY] = obj or mci()
    snap.bindings.update(dict(bindings))
    return snap


def run_step(snap):
    out = snap.copy_computed()
    return mci_ctl.step(snap, out, "2026-01-01T00:00:00Z", StepContext(settings=Settings())), out


def test_step_blocks_and_keeps_the_load_balancer_status():
    lb = {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}
    snap = snapshot({"member1": ["TrafficControl"], "member2": []}, [rb("web", ["member1", "member2"])],
                    mci(status=dict(lb, trafficBlockClusters=["stale"])))
    changed, out = run_step(snap)
    assert changed
    assert out.overlays[MCI_KEY]["status"] == {
        "loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]},
        "serviceLocations": [{"name": "web", "clusters": ["member1", "member2"]}],
        "trafficBlockClusters": ["member1"]}
    snap.overlays = dict(out.overlays)
    changed, out2 = run_step(snap)
    assert not changed


def test_step_clears_the_block_when_the_action_goes():
    snap = snapshot({"member1": ["TrafficControl"]}, [rb("web", ["member1"])])
    _, out = run_step(snap)
    assert out.overlays[MCI_KEY]["status"]["trafficBlockClusters"] == ["member1"]
    snap2 = snapshot({"member1": []}, [rb("web", ["member1"])])
    snap2.overlays[MCI_KEY] = out.overlays[MCI_KEY]
    changed, out2 = run_step(snap2)
    assert changed
    assert out2.overlays[MCI_KEY]["status"] == {"serviceLocations": [{"name": "web", "clusters": ["member1"]}]}


def test_step_without_bindings_writes_nothing_and_drops_orphans():
    snap = snapshot({"member1": ["TrafficControl"]})
    orphan = ("networking.karmada.io", "MultiClusterIngress", "default", "gone")
    snap.overlays[orphan] = {"apiVersion": "networking.karmada.io/v1alpha1", "kind": "MultiClusterIngress",
                             "metadata": {"name": "gone", "namespace": "default"}, "status": {}}
    changed, out = run_step(snap)
    assert changed
    assert MCI_KEY not in out.overlays and orphan not in out.overlays
