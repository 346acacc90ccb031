"""propagateDeps: the dependencies distributor's attached bindings, offline on a real state directory."""
from __future__ import annotations

import base64
import json

import pytest
import yaml

from karmactl.controllers.dependencies_distributor import depended_by_label, distribute

from tests.conftest import cluster_yaml, write

T0 = "2026-01-01T00:00:00Z"

DEPENDENCIES = {  # attached binding -> (kind, name, Work name) of the dependency
    "app-config-configmap": ("ConfigMap", "app-config"),          # volume
    "env-config-configmap": ("ConfigMap", "env-config"),          # envFrom
    "db-secret-secret": ("Secret", "db-secret"),                  # env valueFrom
    "regcred-secret": ("Secret", "regcred"),                      # imagePullSecrets
    "app-sa-serviceaccount": ("ServiceAccount", "app-sa"),        # serviceAccountName
    "app-data-persistentvolumeclaim": ("PersistentVolumeClaim", "app-data"),  # volume claim
}


def app(state, name="app", propagate_deps="true", clusters="[member1, member2]", extra="", missing=()):
    """A Deployment with the six dependencies (ConfigMap volume and envFrom, Secret env and
    imagePullSecret, ServiceAccount, PVC), its policy, and the dependencies themselves."""
    write(state / f"{name}.yaml", f"""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: {name}, namespace: default}}
        spec:
          replicas: 2
          selector: {{matchLabels: {{app: {name}}}}}
          template:
            metadata: {{labels: {{app: {name}}}}}
            spec:
              serviceAccountName: app-sa
              imagePullSecrets: [{{name: regcred}}]
              containers:
              - name: app
                image: nginx:1.25
                envFrom: [{{configMapRef: {{name: env-config}}}}]
                env: [{{name: PW, valueFrom: {{secretKeyRef: {{name: db-secret, key: pw}}}}}}]
              volumes:
              - {{name: conf, configMap: {{name: app-config}}}}
              - {{name: data, persistentVolumeClaim: {{claimName: app-data}}}}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {{name: {name}, namespace: default}}
        spec:
          propagateDeps: {propagate_deps}
          resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: {name}}}]
          placement:
            clusterAffinity: {{clusterNames: {clusters}}}
            replicaScheduling: {{replicaSchedulingType: Duplicated}}
        {extra}
        """)
    docs = {
        "app-config": "kind: ConfigMap\ndata: {a: b}",
        "env-config": "kind: ConfigMap\ndata: {LEVEL: debug}",
        "db-secret": f"kind: Secret\ndata: {{pw: {base64.b64encode(b's3cret').decode()}}}",
        "regcred": "kind: Secret\ntype: kubernetes.io/dockerconfigjson\n"
                   f"data: {{.dockerconfigjson: {base64.b64encode(b'{}').decode()}}}",
        "app-sa": "kind: ServiceAccount",
        "app-data": "kind: PersistentVolumeClaim\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}",
    }
    text = "\n---\n".join(f"apiVersion: v1\n{body}\nmetadata: {{name: {n}, namespace: default}}"
                          for n, body in docs.items() if n not in missing)
    (state / "deps.yaml").write_text(text + "\n")


def fleet(state):
    for name in ("member1", "member2", "member3"):
        write(state / "clusters" / f"{name}.yaml", cluster_yaml(name))


def rb(state, name):
    path = state / "computed" / "resourcebindings" / "default" / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def works(state):
    """{(cluster, kind, name)} of every Work's manifest."""
    out = set()
    for path in (state / "computed" / "works").glob("karmada-es-*/*.json"):
        w = json.loads(path.read_text())
        if w["metadata"].get("deletionTimestamp"):
            continue
        m = w["spec"]["workload"]["manifests"][0]
        out.add((path.parent.name[len("karmada-es-"):], m["kind"], m["metadata"]["name"]))
    return out


def reconcile(cli, now=T0):
    code, out, err = cli("reconcile", "--offline", "--now", now)
    assert code == 0, err
    return err


@pytest.mark.parametrize("binding_name", sorted(DEPENDENCIES))
def test_each_dependency_gets_an_attached_binding_that_follows_the_workload(cli, state, binding_name):
    fleet(state)
    app(state)
    reconcile(cli)
    kind, name = DEPENDENCIES[binding_name]
    attached = yaml.safe_load(cli.ok("get", "rb", binding_name, "-n", "default", "-o", "yaml"))
    workload = rb(state, "app-deployment")
    assert attached["metadata"]["labels"][depended_by_label("default", "app-deployment")] == \
        workload["metadata"]["labels"]["resourcebinding.karmada.io/permanent-id"]
    assert attached["metadata"]["ownerReferences"][0]["kind"] == kind
    spec = attached["spec"]
    assert {k: spec["resource"][k] for k in ("apiVersion", "kind", "namespace", "name")} == \
        {"apiVersion": "v1", "kind": kind, "namespace": "default", "name": name}
    assert spec["requiredBy"] == [{"namespace": "default", "name": "app-deployment",
                                   "clusters": [{"name": "member1", "replicas": 2}, {"name": "member2", "replicas": 2}]}]
    assert spec["conflictResolution"] == "Abort" and spec["preserveResourcesOnDeletion"] is False
    assert "placement" not in spec and "clusters" not in spec  # never scheduled: it follows requiredBy
    assert {c for c, k, n in works(state) if (k, n) == (kind, name)} == {"member1", "member2"}


def test_dependencies_follow_a_placement_change_and_leave_with_the_workload(cli, state):
    fleet(state)
    app(state)
    reconcile(cli)
    dependency_works = {(k, n) for k, n in DEPENDENCIES.values()}
    assert {(c, k, n) for c, k, n in works(state) if (k, n) in dependency_works} == \
        {(c, k, n) for c in ("member1", "member2") for k, n in dependency_works}
    app(state, clusters="[member2, member3]")
    reconcile(cli, "2026-01-01T00:01:00Z")
    assert {c for c, k, n in works(state) if (k, n) in dependency_works} == {"member2", "member3"}
    assert rb(state, "app-config-configmap")["spec"]["requiredBy"][0]["clusters"] == [
        {"name": "member2", "replicas": 2}, {"name": "member3", "replicas": 2}]
    # the workload goes: so do the attached bindings and every dependency Work
    cli.ok("delete", "deploy", "app", "-n", "default")
    reconcile(cli, "2026-01-01T00:02:00Z")
    assert all(rb(state, n) is None for n in DEPENDENCIES)
    assert works(state) == set()


def test_turning_propagate_deps_off_removes_the_attached_bindings(cli, state):
    fleet(state)
    app(state)
    reconcile(cli)
    app(state, propagate_deps="false")
    err = reconcile(cli, "2026-01-01T00:01:00Z")
    assert all(rb(state, n) is None for n in DEPENDENCIES)
    assert {k for _c, k, _n in works(state)} == {"Deployment"}
    workload = rb(state, "app-deployment")
    assert "resourcebinding.karmada.io/dependencies" not in workload["metadata"].get("annotations", {})
    assert "attached ResourceBinding default/app-config-configmap removed" in err


def test_a_missing_dependency_is_reported_on_the_workload_binding(cli, state):
    fleet(state)
    app(state, missing=("regcred",))
    err = reconcile(cli)
    assert ("warning: ResourceBinding default/app-deployment: dependencies not found in the state directory: "
            "Secret default/regcred") in err
    cond = next(c for c in rb(state, "app-deployment")["status"]["conditions"] if c["type"] == "DependenciesDistributed")
    assert (cond["status"], cond["reason"]) == ("False", "DependencyNotFound")
    assert rb(state, "regcred-secret") is None and rb(state, "db-secret-secret") is not None
    # the Secret appears: distributed, and the condition says so
    app(state)
    reconcile(cli, "2026-01-01T00:01:00Z")
    cond = next(c for c in rb(state, "app-deployment")["status"]["conditions"] if c["type"] == "DependenciesDistributed")
    assert (cond["status"], cond["reason"]) == ("True", "SyncScheduleResultToDependenciesSucceed")
    assert {c for c, k, n in works(state) if n == "regcred"} == {"member1", "member2"}
    recorded = json.loads(rb(state, "app-deployment")["metadata"]["annotations"]["resourcebinding.karmada.io/dependencies"])
    assert {"apiVersion": "v1", "kind": "Secret", "namespace": "default", "name": "regcred"} in recorded


def test_a_dependency_claimed_by_its_own_policy_keeps_its_binding_and_gains_required_by(cli, state):
    fleet(state)
    app(state, clusters="[member1]")
    write(state / "cm-policy.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: app-config, namespace: default}
        spec:
          resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: app-config}]
          placement: {clusterAffinity: {clusterNames: [member3]}}
        """)
    reconcile(cli)
    own = rb(state, "app-config-configmap")
    assert own["spec"]["placement"] == {"clusterAffinity": {"clusterNames": ["member3"]}}
    assert own["spec"]["clusters"] == [{"name": "member3"}]
    assert own["spec"]["requiredBy"] == [{"namespace": "default", "name": "app-deployment",
                                         "clusters": [{"name": "member1", "replicas": 2}]}]
    assert depended_by_label("default", "app-deployment") in own["metadata"]["labels"]
    assert {c for c, k, n in works(state) if n == "app-config"} == {"member1", "member3"}
    # a second run keeps it as it is (the detector keeps requiredBy and the depended-by label)
    before = (state / "computed" / "resourcebindings" / "default" / "app-config-configmap.json").read_text()
    reconcile(cli)
    assert (state / "computed" / "resourcebindings" / "default" / "app-config-configmap.json").read_text() == before
    # the policy goes: the binding becomes an attached one, its Works follow the workload only
    (state / "cm-policy.yaml").unlink()
    reconcile(cli, "2026-01-01T00:01:00Z")
    attached = rb(state, "app-config-configmap")
    assert "placement" not in attached["spec"] and attached["spec"]["requiredBy"][0]["name"] == "app-deployment"
    assert {c for c, k, n in works(state) if n == "app-config"} == {"member1"}


def test_shared_dependency_takes_overwrite_and_preserve_from_any_workload_and_reports_the_conflict(cli, state):
    fleet(state)
    app(state, name="app", clusters="[member1]")
    app(state, name="app2", clusters="[member2]", extra="  conflictResolution: Overwrite\n          preserveResourcesOnDeletion: true")
    err = reconcile(cli)
    spec = rb(state, "app-config-configmap")["spec"]
    assert [r["name"] for r in spec["requiredBy"]] == ["app-deployment", "app2-deployment"]
    assert spec["conflictResolution"] == "Overwrite" and spec["preserveResourcesOnDeletion"] is True
    assert ("ResourceBinding default/app-config-configmap: DependencyPolicyConflict: Dependency policy conflict "
            "detected: ConflictResolution conflicted (Overwrite vs Abort); PreserveResourcesOnDeletion conflicted "
            "(true vs false).") in err
    assert {c for c, k, n in works(state) if n == "app-config"} == {"member1", "member2"}
    # one workload goes: the dependency stays for the other, on its cluster only, with its settings
    (state / "app2.yaml").unlink()
    reconcile(cli, "2026-01-01T00:01:00Z")
    spec = rb(state, "app-config-configmap")["spec"]
    assert [r["name"] for r in spec["requiredBy"]] == ["app-deployment"]
    assert spec["conflictResolution"] == "Abort" and spec["preserveResourcesOnDeletion"] is False
    assert {c for c, k, n in works(state) if n == "app-config"} == {"member1"}


def test_a_second_run_changes_nothing(cli, state):
    fleet(state)
    app(state)
    reconcile(cli)
    before = {p: p.read_bytes() for p in (state / "computed").rglob("*.json")}
    reconcile(cli)
    assert {p: p.read_bytes() for p in (state / "computed").rglob("*.json")} == before


@pytest.mark.parametrize("case, deps, expected", [
    ("named", [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "a"}], ["a-configmap"]),
    ("label selector", [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default",
                         "labelSelector": {"matchLabels": {"team": "x"}}}], ["a-configmap", "b-configmap"]),
    ("other namespace is not matched", [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "other",
                                         "labelSelector": {"matchLabels": {"team": "x"}}}], []),
    ("none", [], []),
])
def test_distribute_resolves_named_and_label_selector_references(case, deps, expected):
    def cm(name, labels):
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default", "uid": name, "labels": labels}}
    templates = {("", "ConfigMap", "default", "a"): cm("a", {"team": "x"}),
                 ("", "ConfigMap", "default", "b"): cm("b", {"team": "x"}),
                 ("", "ConfigMap", "default", "c"): cm("c", {"team": "y"}),
                 ("multicluster.x-k8s.io", "ServiceImport", "default", "w"): {
                     "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
                     "metadata": {"name": "w", "namespace": "default", "uid": "w"}}}
    workload = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                "metadata": {"name": "w-serviceimport", "namespace": "default",
                             "labels": {"resourcebinding.karmada.io/permanent-id": "id-w"}},
                "spec": {"propagateDeps": True, "clusters": [{"name": "m1"}],
                         "resource": {"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
                                      "namespace": "default", "name": "w"}}}
    key = ("work.karmada.io", "ResourceBinding", "default", "w-serviceimport")
    res = distribute({key: workload}, templates, lambda k: templates[k], lambda obj: deps, T0)
    created = sorted(k[3] for k, b in res.bindings.items() if b is not None and k != key)
    assert created == expected, case
    for name in created:
        b = res.bindings[("work.karmada.io", "ResourceBinding", "default", name)]
        assert b["spec"]["requiredBy"] == [{"namespace": "default", "name": "w-serviceimport", "clusters": [{"name": "m1"}]}]
        assert b["metadata"]["labels"][depended_by_label("default", "w-serviceimport")] == "id-w"


def test_depended_by_label_matches_karmada():
    # pkg/dependenciesdistributor/dependencies_distributor_test.go: binding test/test-binding
    assert depended_by_label("test", "test-binding") == "resourcebinding.karmada.io/depended-by-5dbb6dc9c8"


def test_an_unparsable_dependency_interpretation_is_reported_and_keeps_earlier_snapshots():
    key = ("work.karmada.io", "ResourceBinding", "default", "app-deployment")
    dep_key = ("work.karmada.io", "ResourceBinding", "default", "a-configmap")
    workload = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                "metadata": {"name": "app-deployment", "namespace": "default", "labels": {}},
                "spec": {"propagateDeps": True, "clusters": [{"name": "m1"}],
                         "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "app"}}}
    attached = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                "metadata": {"name": "a-configmap", "namespace": "default",
                             "labels": {depended_by_label("default", "app-deployment"): ""}},
                "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "a"},
                         "requiredBy": [{"namespace": "default", "name": "app-deployment", "clusters": [{"name": "m1"}]}]}}
    templates = {("apps", "Deployment", "default", "app"): {"apiVersion": "apps/v1", "kind": "Deployment",
                                                            "metadata": {"name": "app", "namespace": "default"}},
                 ("", "ConfigMap", "default", "a"): {"apiVersion": "v1", "kind": "ConfigMap",
                                                     "metadata": {"name": "a", "namespace": "default", "uid": "u"}}}

    def broken(obj):
        raise ValueError("dependencies[0]: dependency can not leave name and labelSelector all empty")
    res = distribute({key: workload, dep_key: attached}, templates, lambda k: templates[k], broken, T0)
    assert res.warnings == ["ResourceBinding default/app-deployment: dependencies not distributed: "
                            "dependencies[0]: dependency can not leave name and labelSelector all empty"]
    assert dep_key not in res.bindings or res.bindings[dep_key]["spec"]["requiredBy"] == attached["spec"]["requiredBy"]
    cond = res.bindings[key]["status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("DependenciesDistributed", "False", "GetDependenciesFailed")
