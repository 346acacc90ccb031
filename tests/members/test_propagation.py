"""Online reconcile against emulated members: propagation, idempotence, status, conflicts, suspension."""
from __future__ import annotations

import yaml

from tests.conftest import write

from .conftest import at, computed, condition, files, kubectl, nginx, policy, reconcile, settle, someone_elses_nginx, work

CONFLICT_MSG = ("Failed to apply all manifests (0/1): resource(kind=Deployment, default/nginx) already exists in the "
                "cluster member1 and the work.karmada.io/conflict-resolution strategy value is empty, Karmada will "
                "not manage this resource")


def _ready(state, clusters=("member1", "member2")):
    def check():
        rb = computed(state, "resourcebindings", "default", "nginx-deployment.json") or {}
        items = (rb.get("status") or {}).get("aggregatedStatus") or []
        return [i["clusterName"] for i in items if i.get("health") == "Healthy"] == list(clusters)
    return check


def test_static_weights_land_1_and_2_replicas_then_status_aggregates(cli, state, members, tmp_path):
    nginx(state)
    policy(state)
    reconcile(cli)
    assert members.deploy("member1")["spec"]["replicas"] == 1
    assert members.deploy("member2")["spec"]["replicas"] == 2
    assert members.deploy("member3") is None
    cache = tmp_path / "kubectl-cache"
    for name, want in (("member1", "1"), ("member2", "2")):
        got = kubectl(members.kubeconfig(name), cache, "get", "deploy", "nginx", "-n", "default",
                      "-o", "jsonpath={.spec.replicas}")
        assert got == want
    # the member copy carries Karmada's linking labels/annotations and karmactl's applied hash
    md = members.deploy("member2")["metadata"]
    assert md["labels"]["karmada.io/managed"] == "true"
    assert md["annotations"]["work.karmada.io/name"] == "nginx-687f7fb96f"
    assert md["annotations"]["karmactl.io/applied-hash"]
    assert [f["manager"] for f in md["managedFields"]] == ["karmactl"]

    # Cluster status from the probe
    cluster = yaml.safe_load(cli.ok("get", "cluster", "member1", "-o", "yaml"))
    assert condition(cluster, "Ready")["reason"] == "ClusterReady"
    assert condition(cluster, "CompleteAPIEnablements")["status"] == "True"
    st = cluster["status"]
    assert st["kubernetesVersion"] == "v1.31.0"
    assert st["nodeSummary"] == {"totalNum": 2, "readyNum": 2}
    assert st["resourceSummary"]["allocatable"]["cpu"] == "16"
    assert st["resourceSummary"]["allocatable"]["pods"] == "220"
    assert any(e["groupVersion"] == "apps/v1" for e in st["apiEnablements"])

    # Works: Dispatching and Applied, manifest status reflected from the member
    w = work(state, "member1")
    assert condition(w, "Dispatching")["reason"] == "Dispatching"
    assert condition(w, "Applied")["message"] == "Manifest has been successfully applied"
    ident = w["status"]["manifestStatuses"][0]["identifier"]
    assert ident == {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment", "resource": "",
                     "namespace": "default", "name": "nginx"}

    # once the fake controller marked the copies ready: Healthy per cluster, readyReplicas 3
    settle(cli, members, 5, until=_ready(state))
    rb = yaml.safe_load(cli.ok("get", "rb", "nginx-deployment", "-o", "yaml"))
    items = rb["status"]["aggregatedStatus"]
    assert [(i["clusterName"], i["applied"], i["health"], i["status"]["readyReplicas"]) for i in items] == [
        ("member1", True, "Healthy", 1), ("member2", True, "Healthy", 2)]
    assert condition(rb, "FullyApplied")["reason"] == "FullyAppliedSuccess"
    template = yaml.safe_load(cli.ok("get", "deploy", "nginx", "-o", "yaml"))
    assert template["status"]["readyReplicas"] == 3
    assert template["status"]["observedGeneration"] == 1


def test_second_run_sends_no_write_and_changes_no_file(cli, state, members):
    nginx(state)
    policy(state)
    settle(cli, members, 0, until=_ready(state))
    reconcile(cli, 10)  # whatever the last status change left
    before = files(state)
    members.clear_logs()
    err = reconcile(cli, 20)
    assert members.writes() == {"member1": [], "member2": [], "member3": []}
    assert "reconciled: 0 file(s) changed" in err
    assert files(state) == before
    # reads are a handful per member: probe + one LIST per kind, not one GET per Work
    assert len(members["member1"].request_log) < 30

    # a template change is applied (one write per target member), and drift is corrected
    nginx(state, replicas=6)
    members.clear_logs()
    reconcile(cli, 30)
    assert members.deploy("member1")["spec"]["replicas"] == 2
    assert members.deploy("member2")["spec"]["replicas"] == 4
    assert [w.split()[0] for w in members.writes()["member2"]] == ["PUT"]  # a replace, as Karmada updates
    members["member1"].store.delete(members["member1"]._type("apps/v1", "Deployment"), "default", "nginx")
    reconcile(cli, 40)
    assert members.deploy("member1")["spec"]["replicas"] == 2


def test_conflict_abort_then_overwrite(cli, state, members):
    member1 = members["member1"]
    someone_elses_nginx(member1)
    nginx(state)
    policy(state)
    reconcile(cli)
    w = work(state, "member1")
    applied = condition(w, "Applied")
    assert (applied["status"], applied["reason"], applied["message"]) == ("False", "AppliedFailed", CONFLICT_MSG)
    assert member1.get_object("apps/v1", "Deployment", "default", "nginx")["spec"]["replicas"] == 7
    assert members.deploy("member2")["spec"]["replicas"] == 2  # the other member is served
    rb = computed(state, "resourcebindings", "default", "nginx-deployment.json")
    item = rb["status"]["aggregatedStatus"][0]
    assert item == {"clusterName": "member1", "applied": False, "appliedMessage": CONFLICT_MSG, "health": "Unknown",
                    "creationTimestamp": at(0)}
    assert condition(rb, "FullyApplied")["status"] == "False"

    # Overwrite (policy conflictResolution): karmactl takes the object over
    policy(state, extra="\n  conflictResolution: Overwrite")
    reconcile(cli, 10)
    got = member1.get_object("apps/v1", "Deployment", "default", "nginx")
    assert got["spec"]["replicas"] == 1
    assert got["metadata"]["labels"]["karmada.io/managed"] == "true"
    assert got["metadata"]["labels"]["owner"] == "someone"  # member-side labels stay
    assert condition(work(state, "member1"), "Applied")["status"] == "True"


def test_suspended_work_is_not_applied_but_still_deleted(cli, state, members):
    nginx(state)
    policy(state)
    reconcile(cli)
    assert members.deploy("member1")["spec"]["replicas"] == 1
    # suspend dispatching, then change the template: the member copies stay as they were
    policy(state, extra="\n  suspension:\n    dispatching: true")
    nginx(state, replicas=6)
    members.clear_logs()
    err = reconcile(cli, 10)
    assert "work karmada-es-member1/nginx-687f7fb96f: dispatching suspended" in err
    assert "work karmada-es-member2/nginx-687f7fb96f: dispatching suspended" in err
    assert members.writes() == {"member1": [], "member2": [], "member3": []}
    assert members.deploy("member1")["spec"]["replicas"] == 1
    w = work(state, "member1")
    assert w["spec"]["suspendDispatching"] is True
    assert w["spec"]["workload"]["manifests"][0]["spec"]["replicas"] == 2  # the desired state is kept
    d = condition(w, "Dispatching")
    assert (d["status"], d["reason"], d["message"]) == ("False", "SuspendDispatching",
                                                        "Work dispatching is in a suspended state.")
    # removing the template deletes the member copies even while suspended
    cli.ok("delete", "deploy", "nginx", "-n", "default")
    reconcile(cli, 20)
    assert members.deploy("member1") is None and members.deploy("member2") is None
    assert work(state, "member1") is None and work(state, "member2") is None


def test_new_suspended_work_is_never_applied_and_dropped_at_once(cli, state, members):
    nginx(state)
    policy(state, extra="\n  suspension:\n    dispatchingOnClusters:\n      clusterNames: [member2]")
    reconcile(cli)
    assert members.deploy("member1") is not None and members.deploy("member2") is None
    assert condition(work(state, "member2"), "Applied") is None
    rb = computed(state, "resourcebindings", "default", "nginx-deployment.json")
    assert rb["status"]["aggregatedStatus"][1] == {"clusterName": "member2", "applied": False, "health": "Unknown",
                                                   "creationTimestamp": at(0)}
    cli.ok("delete", "deploy", "nginx", "-n", "default")
    reconcile(cli, 10)
    assert members.deploy("member1") is None
    assert work(state, "member2") is None


def test_namespace_created_for_namespaced_objects_and_preserve_on_deletion(cli, state, members):
    write(state / "apps" / "cm.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: settings, namespace: shop}
        data: {color: blue}
        """)
    write(state / "policies" / "cm.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: cm, namespace: shop}
        spec:
          resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: settings}]
          preserveResourcesOnDeletion: true
          placement: {clusterAffinity: {clusterNames: [member3]}}
        """)
    reconcile(cli)
    m3 = members["member3"]
    assert m3.get_object("v1", "Namespace", None, "shop") is not None
    cm = m3.get_object("v1", "ConfigMap", "shop", "settings")
    assert cm["data"] == {"color": "blue"}
    cli.ok("delete", "cm", "settings", "-n", "shop")
    reconcile(cli, 10)
    kept = m3.get_object("v1", "ConfigMap", "shop", "settings")
    assert kept is not None and kept["data"] == {"color": "blue"}
    assert "karmada.io/managed" not in (kept["metadata"].get("labels") or {})
    assert not any(k.startswith(("work.karmada.io", "resourcebinding.karmada.io", "karmactl.io"))
                   for k in kept["metadata"].get("annotations") or {})


def test_dry_run_reads_members_but_writes_nothing(cli, state, members):
    nginx(state)
    policy(state)
    code, out, err = cli("reconcile", "--dry-run", "--now", at(0))
    assert code == 0, err
    assert members.writes() == {"member1": [], "member2": [], "member3": []}
    assert not (state / "computed").exists()
    assert "computed/works/karmada-es-member1/nginx-687f7fb96f.json" in out


def test_namespace_and_crd_works_go_first_and_custom_resources_follow(cli, state, members):
    """The CRD is applied in the first run; the next probe sees its API, so the Widget is scheduled
    and applied in the second (as in Karmada); then nothing is written."""
    write(state / "ns.yaml", """
        apiVersion: v1
        kind: Namespace
        metadata: {name: shop}
        """)
    write(state / "crd.yaml", """
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata: {name: widgets.example.com}
        spec:
          group: example.com
          names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
          scope: Namespaced
          versions:
          - name: v1
            served: true
            storage: true
            schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
        """)
    write(state / "w.yaml", """
        apiVersion: example.com/v1
        kind: Widget
        metadata: {name: w1, namespace: shop}
        spec: {size: 3}
        """)
    write(state / "pp.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: ClusterPropagationPolicy
        metadata: {name: all}
        spec:
          resourceSelectors:
          - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition}
          - {apiVersion: example.com/v1, kind: Widget}
          placement: {clusterAffinity: {clusterNames: [member1]}}
        """)
    err = reconcile(cli, 0)
    err = reconcile(cli, 10)
    m1 = members["member1"]
    assert m1.get_object("v1", "Namespace", None, "shop") is not None
    assert m1.get_object("example.com/v1", "Widget", "shop", "w1")["spec"] == {"size": 3}
    members.clear_logs()
    err = reconcile(cli, 20)
    assert members.writes()["member1"] == []
