"""MultiClusterService through the CLI on real files, offline: validation, the Service's binding
and marker Works, the claim that keeps policies off the Service, conditions and Events."""
from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import write

NOW = "2026-01-01T00:00:00Z"


def cluster(name: str, ready: str = "True", eps: bool = True) -> str:
    eps_api = "\n      - groupVersion: discovery.k8s.io/v1\n        resources: [{name: endpointslices, kind: EndpointSlice}]"
    return f"""
    apiVersion: cluster.karmada.io/v1alpha1
    kind: Cluster
    metadata: {{name: {name}}}
    spec: {{syncMode: Push, apiEndpoint: "https://{name}.example:6443"}}
    status:
      conditions:
      - {{type: Ready, status: "{ready}", reason: ClusterReady, message: ok, lastTransitionTime: "2025-12-31T00:00:00Z"}}
      - {{type: CompleteAPIEnablements, status: "True", reason: CompleteAPIEnablements, message: ok,
          lastTransitionTime: "2025-12-31T00:00:00Z"}}
      apiEnablements:
      - groupVersion: v1
        resources: [{{name: services, kind: Service}}]{eps_api if eps else ""}
    """


SERVICE = """
    apiVersion: v1
    kind: Service
    metadata: {name: web, namespace: default}
    spec:
      selector: {app: web}
      ports: [{port: 80}]
    """


def mcs(extra: str = "providerClusters: [{name: member1}]\n      consumerClusters: [{name: member2}]") -> str:
    return f"""
    apiVersion: networking.karmada.io/v1alpha1
    kind: MultiClusterService
    metadata: {{name: web, namespace: default}}
    spec:
      types: [CrossCluster]
      {extra}
    """


POLICY = """
    apiVersion: policy.karmada.io/v1alpha1
    kind: PropagationPolicy
    metadata: {name: web, namespace: default}
    spec:
      resourceSelectors: [{apiVersion: v1, kind: Service, name: web}]
      placement: {clusterAffinity: {clusterNames: [member3]}}
    """


@pytest.fixture
def three(state):
    for name in ("member1", "member2", "member3"):
        write(state / "clusters" / f"{name}.yaml", cluster(name))
    write(state / "apps" / "web.yaml", SERVICE)
    return state


def _json(state, *parts):
    path = state.joinpath("computed", *parts)
    return json.loads(path.read_text()) if path.exists() else None


def _works(state) -> dict:
    """``{(cluster, manifest kind): Work}`` of every computed Work."""
    out = {}
    for path in sorted((state / "computed" / "works").rglob("*.json")):
        w = json.loads(path.read_text())
        out[(path.parent.name[len("karmada-es-"):], w["spec"]["workload"]["manifests"][0]["kind"])] = w
    return out


def _cond(obj: dict, ctype: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == ctype), None)


def test_the_service_goes_to_providers_and_consumers_and_only_providers_get_the_mcs_work(cli, three):
    write(three / "apps" / "mcs.yaml", mcs())
    cli.ok("reconcile", "--offline", "--now", NOW)

    rb = _json(three, "resourcebindings", "default", "web-service.json")
    assert rb["metadata"]["labels"]["binding.karmada.io/managed-by"] == "MultiClusterService"
    assert rb["metadata"]["annotations"]["multiclusterservice.karmada.io/name"] == "web"
    assert rb["spec"]["placement"] == {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}
    assert rb["spec"]["conflictResolution"] == "Overwrite"
    assert [c["name"] for c in rb["spec"]["clusters"]] == ["member1", "member2"]
    assert sorted(_works(three)) == [("member1", "MultiClusterService"), ("member1", "Service"),
                                     ("member2", "Service")]
    marker = _works(three)[("member1", "MultiClusterService")]
    assert marker["spec"]["suspendDispatching"] is True
    assert marker["metadata"]["labels"]["multiclusterservice.karmada.io/name"] == "web"

    svc = yaml.safe_load(cli.ok("get", "svc", "web", "-o", "yaml"))
    assert svc["metadata"]["labels"]["resourcetemplate.karmada.io/claimed-by"] == "MultiClusterService"
    got = yaml.safe_load(cli.ok("get", "mcs", "web", "-o", "yaml"))
    assert got["metadata"]["labels"]["multiclusterservice.karmada.io/permanent-id"]
    applied = _cond(got, "ServiceApplied")
    assert (applied["status"], applied["reason"]) == ("True", "ServiceAppliedSucceed")
    assert cli.ok("--now", "2026-01-01T01:00:00Z", "get", "multiclusterservices").split() == ["NAME", "AGE", "web", "60m"]
    events = cli.ok("get", "events", "--field-selector", "regarding.kind=MultiClusterService")
    assert "SyncServiceSucceed" in events and "Service is propagated to target clusters." in events

    # nothing changes on a second run
    code, _out, err = cli("reconcile", "--offline", "--now", "2026-01-01T00:01:00Z")
    assert code == 0 and "0 file(s) changed" in err


def test_empty_provider_and_consumer_lists_mean_every_cluster(cli, three):
    write(three / "apps" / "mcs.yaml", mcs(""))
    cli.ok("reconcile", "--offline", "--now", NOW)
    rb = _json(three, "resourcebindings", "default", "web-service.json")
    assert rb["spec"]["placement"]["clusterAffinity"]["clusterNames"] == ["member1", "member2", "member3"]
    assert sorted(c for c, kind in _works(three) if kind == "MultiClusterService") == ["member1", "member2", "member3"]


def test_a_policy_cannot_take_the_service_while_the_mcs_claims_it_and_does_once_it_goes(cli, three):
    write(three / "policies" / "web.yaml", POLICY)
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert [c["name"] for c in _json(three, "resourcebindings", "default", "web-service.json")["spec"]["clusters"]] \
        == ["member3"]

    write(three / "apps" / "mcs.yaml", mcs())
    cli.ok("reconcile", "--offline", "--now", "2026-01-01T00:01:00Z")
    rb = _json(three, "resourcebindings", "default", "web-service.json")
    assert "propagationpolicy.karmada.io/permanent-id" not in rb["metadata"]["labels"]
    assert [c["name"] for c in rb["spec"]["clusters"]] == ["member1", "member2"]
    assert ("member3", "Service") not in _works(three)

    (three / "apps" / "mcs.yaml").unlink()
    cli.ok("reconcile", "--offline", "--now", "2026-01-01T00:02:00Z")
    rb = _json(three, "resourcebindings", "default", "web-service.json")
    assert "binding.karmada.io/managed-by" not in rb["metadata"]["labels"]
    assert not any(k.startswith("multiclusterservice.karmada.io/") for k in rb["metadata"]["annotations"])
    assert [c["name"] for c in rb["spec"]["clusters"]] == ["member3"]
    assert sorted(_works(three)) == [("member3", "Service")]
    svc = yaml.safe_load(cli.ok("get", "svc", "web", "-o", "yaml"))
    assert "resourcetemplate.karmada.io/claimed-by" not in (svc["metadata"].get("labels") or {})


def test_removing_the_mcs_without_a_policy_removes_the_binding(cli, three):
    write(three / "apps" / "mcs.yaml", mcs())
    cli.ok("reconcile", "--offline", "--now", NOW)
    (three / "apps" / "mcs.yaml").unlink()
    cli.ok("reconcile", "--offline", "--now", "2026-01-01T00:01:00Z")
    assert _json(three, "resourcebindings", "default", "web-service.json") is None
    assert _works(three) == {}
    assert _json(three, "status", "multiclusterservices.networking.karmada.io", "default", "web.json") is None


def test_a_missing_service_fails_service_applied(cli, three):
    (three / "apps" / "web.yaml").unlink()
    write(three / "apps" / "mcs.yaml", mcs())
    cli.ok("reconcile", "--offline", "--now", NOW)
    applied = _cond(yaml.safe_load(cli.ok("get", "mcs", "web", "-o", "yaml")), "ServiceApplied")
    assert (applied["status"], applied["reason"], applied["message"]) == \
        ("False", "ServiceAppliedFailed", 'services "web" not found')
    assert "SyncServiceFailed" in cli.ok("get", "events", "--field-selector", "regarding.kind=MultiClusterService")
    assert _json(three, "resourcebindings", "default", "web-service.json") is None


def test_unusable_providers_get_no_mcs_work_and_are_named_in_warnings(cli, three):
    write(three / "clusters" / "member1.yaml", cluster("member1", ready="False"))
    write(three / "clusters" / "member2.yaml", cluster("member2", eps=False))
    write(three / "apps" / "mcs.yaml", mcs("providerClusters: [{name: member1}, {name: member2}, {name: gone}]"))
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0
    assert "Provider cluster member1 is not ready, skip to propagate MultiClusterService" in err
    assert "APIIncompatible: Provider cluster member2 does not support EndpointSlice" in err
    assert "ClusterNotFound: Provider cluster gone is not found" in err
    assert not any(kind == "MultiClusterService" for _c, kind in _works(three))


@pytest.mark.parametrize("spec, field, words", [
    ("types: [LoadBalancer]", "spec.types", "multicluster-cloud-provider"),
    ("types: []", "spec.types", "CrossCluster is the only exposure type"),
    ("types: [CrossCluster, LoadBalancer]", "spec.types", "should not contain more than one type"),
    ("types: [Other]", "spec.types[0]", "ExposureType Error"),
    ("types: [CrossCluster]\n  ports: [{port: 80}]", "spec.ports", "do not filter ports"),
    ("types: [CrossCluster]\n  range: {clusterNames: [member1]}", "spec.range", "deprecated"),
    ("types: [CrossCluster]\n  serviceProvisionClusters: [member1]", "spec.serviceProvisionClusters", "deprecated"),
    ("types: [CrossCluster]\n  providerClusters: [{name: Bad_Name}]", "spec.range.providerClusters[0]", "Invalid value"),
    ("types: [CrossCluster]\n  consumerClusters: [{}]", "spec.consumerClusters[0].name", "Required"),
])
def test_invalid_multiclusterservices_are_refused_naming_file_object_and_field(cli, state, tmp_path, spec, field,
                                                                                 words):
    path = write(tmp_path / "mcs.yaml", "apiVersion: networking.karmada.io/v1alpha1\nkind: MultiClusterService\n"
                                        "metadata: {name: web, namespace: default}\nspec:\n  " + spec + "\n")
    code, _out, err = cli("apply", "-f", str(path))
    assert code == 2, err
    assert "mcs.yaml" in err and "MultiClusterService default/web" in err and field in err and words in err


def test_the_name_must_be_a_dns_1035_label(cli, state, tmp_path):
    path = write(tmp_path / "mcs.yaml", "apiVersion: networking.karmada.io/v1alpha1\nkind: MultiClusterService\n"
                                        "metadata: {name: 1web, namespace: default}\nspec: {types: [CrossCluster]}\n")
    code, _out, err = cli("apply", "-f", str(path))
    assert code == 2 and "metadata.name" in err and "DNS-1035" in err


SLICE = """
    apiVersion: discovery.k8s.io/v1
    kind: EndpointSlice
    metadata:
      name: web-abcde
      labels: {kubernetes.io/service-name: web}
    addressType: IPv4
    ports: [{port: 8080, protocol: TCP}]
    endpoints:
    - addresses: [10.1.0.7]
    """


def test_recorded_endpointslices_are_dispatched_to_consumers_by_an_offline_run(cli, three, tmp_path):
    write(three / "apps" / "mcs.yaml", mcs("providerClusters: [{name: member1}]"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    write(tmp_path / "slices.yaml", SLICE)
    assert "1 EndpointSlice(s) recorded" in cli.ok("observe", "mcs/web", "--cluster", "member1",
                                                   "--endpointslices", str(tmp_path / "slices.yaml"))
    cli.ok("reconcile", "--offline", "--now", "2026-01-01T00:01:00Z")
    works = _works(three)
    assert works[("member1", "EndpointSlice")]["spec"]["suspendDispatching"] is True
    for consumer in ("member2", "member3"):
        eps = works[(consumer, "EndpointSlice")]["spec"]["workload"]["manifests"][0]
        assert eps["metadata"]["name"] == "member1-web-abcde"
        assert eps["metadata"]["labels"]["kubernetes.io/service-name"] == "web"
        assert eps["metadata"]["annotations"]["endpointslice.karmada.io/provision-cluster"] == "member1"
        assert eps["endpoints"] == [{"addresses": ["10.1.0.7"]}]
    assert "DispatchEndpointSliceSucceed" in cli.ok("get", "events", "--field-selector",
                                                    "regarding.kind=MultiClusterService")

    # the provider now reports none: the consumers' copies go (never applied: dropped at once)
    write(tmp_path / "slices.yaml", "apiVersion: v1\nkind: List\nitems: []\n")
    cli.ok("observe", "mcs/web", "--cluster", "member1", "--endpointslices", str(tmp_path / "slices.yaml"))
    cli.ok("reconcile", "--offline", "--now", "2026-01-01T00:02:00Z")
    assert not any(kind == "EndpointSlice" for _c, kind in _works(three))


def test_recording_endpointslices_needs_a_provider_and_slices_of_the_service(cli, three, tmp_path):
    write(three / "apps" / "mcs.yaml", mcs())
    cli.ok("reconcile", "--offline", "--now", NOW)
    write(tmp_path / "slices.yaml", SLICE)
    code, _out, err = cli("observe", "mcs/web", "--cluster", "member2", "--endpointslices", str(tmp_path / "slices.yaml"))
    assert code == 1 and "no Work on cluster member2" in err
    write(tmp_path / "other.yaml", SLICE.replace("service-name: web", "service-name: api"))
    code, _out, err = cli("observe", "mcs/web", "--cluster", "member1", "--endpointslices", str(tmp_path / "other.yaml"))
    assert code == 2 and "EndpointSlice default/web-abcde" in err and "kubernetes.io/service-name: web" in err
    code, _out, err = cli("observe", "svc/web", "--cluster", "member1", "--endpointslices", str(tmp_path / "slices.yaml"))
    assert code == 2 and "not a Service's" in err
