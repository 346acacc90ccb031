"""MultiClusterService against emulated members: the Service goes to provider and consumer, the
provider's EndpointSlices reach the consumer under Karmada's names and labels, and leave with them."""
from __future__ import annotations

import json

from tests.conftest import write

from .conftest import computed, condition, kubectl, reconcile

SVC_AND_MCS = """
    apiVersion: v1
    kind: Service
    metadata: {name: web, namespace: default}
    spec:
      selector: {app: web}
      ports: [{name: http, port: 80, targetPort: 8080}]
    ---
    apiVersion: networking.karmada.io/v1alpha1
    kind: MultiClusterService
    metadata: {name: web, namespace: default}
    spec:
      types: [CrossCluster]
      providerClusters: [{name: member1}]
      consumerClusters: [{name: member2}]
    """

PROVIDER_SLICE = """
    apiVersion: discovery.k8s.io/v1
    kind: EndpointSlice
    metadata:
      name: web-abcde
      namespace: default
      labels:
        kubernetes.io/service-name: web
        endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io
    addressType: IPv4
    ports: [{name: http, port: 8080, protocol: TCP}]
    endpoints:
    - addresses: [10.1.0.7]
      conditions: {ready: true}
    """


def _slices(members, tmp_path, cluster: str) -> list[dict]:
    out = kubectl(members.kubeconfig(cluster), tmp_path / "kubectl-cache", "get", "endpointslices", "-n", "default",
                  "-l", "kubernetes.io/service-name=web", "-o", "json")
    return json.loads(out)["items"]


def test_consumer_gets_the_providers_endpoints_and_loses_them_with_the_provider_slice(cli, state, members, tmp_path):
    write(state / "apps" / "web.yaml", SVC_AND_MCS)
    reconcile(cli)
    # the Service is on provider and consumer only (placement = providers + consumers)
    for name, want in (("member1", True), ("member2", True), ("member3", False)):
        assert (members[name].get_object("v1", "Service", "default", "web") is not None) is want, name
    assert _slices(members, tmp_path, "member2") == []

    # the provider's endpoint controller (here: kubectl) publishes an EndpointSlice
    write(tmp_path / "eps.yaml", PROVIDER_SLICE)
    kubectl(members.kubeconfig("member1"), tmp_path / "kubectl-cache", "apply", "-f", str(tmp_path / "eps.yaml"))
    err = reconcile(cli, 10)
    assert "warning" not in err, err
    assert "reconciled: 0 file(s) changed" in reconcile(cli, 11)  # collecting again changes nothing
    (eps,) = _slices(members, tmp_path, "member2")
    assert eps["metadata"]["name"] == "member1-web-abcde"
    assert eps["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == \
        "endpointslice-dispatch-controller.karmada.io"
    assert eps["metadata"]["annotations"]["endpointslice.karmada.io/provision-cluster"] == "member1"
    assert [e["addresses"] for e in eps["endpoints"]] == [["10.1.0.7"]]
    assert eps["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    # the provider keeps only its own slice; nothing goes to member3
    assert [s["metadata"]["name"] for s in _slices(members, tmp_path, "member1")] == ["web-abcde"]
    assert members["member3"].get_object("discovery.k8s.io/v1", "EndpointSlice", "default", "member1-web-abcde") is None

    mcs = computed(state, "status", "multiclusterservices.networking.karmada.io", "default", "web.json")
    assert condition(mcs, "ServiceApplied")["reason"] == "ServiceAppliedSucceed"
    assert condition(mcs, "EndpointSliceDispatched")["message"] == "EndpointSlice are dispatched successfully"
    assert "DispatchEndpointSliceSucceed" in cli.ok("get", "events", "--field-selector",
                                                    "regarding.kind=MultiClusterService")
    collected = [p for p in (state / "computed" / "works" / "karmada-es-member1").glob("*.json")
                 if json.loads(p.read_text())["spec"]["workload"]["manifests"][0]["kind"] == "EndpointSlice"]
    assert len(collected) == 1 and json.loads(collected[0].read_text())["spec"]["suspendDispatching"] is True

    # an endpoint change on the provider reaches the consumer on the next run
    write(tmp_path / "eps.yaml", PROVIDER_SLICE.replace("10.1.0.7", "10.1.0.8"))
    kubectl(members.kubeconfig("member1"), tmp_path / "kubectl-cache", "apply", "-f", str(tmp_path / "eps.yaml"))
    reconcile(cli, 20)
    assert [e["addresses"] for e in _slices(members, tmp_path, "member2")[0]["endpoints"]] == [["10.1.0.8"]]

    # the provider's slice goes: so does the consumer's copy
    kubectl(members.kubeconfig("member1"), tmp_path / "kubectl-cache", "delete", "endpointslice", "web-abcde",
            "-n", "default")
    reconcile(cli, 30)
    assert _slices(members, tmp_path, "member2") == []


def test_removing_the_mcs_takes_the_service_and_slices_off_the_members(cli, state, members, tmp_path):
    write(state / "apps" / "web.yaml", SVC_AND_MCS)
    reconcile(cli)
    write(tmp_path / "eps.yaml", PROVIDER_SLICE)
    kubectl(members.kubeconfig("member1"), tmp_path / "kubectl-cache", "apply", "-f", str(tmp_path / "eps.yaml"))
    reconcile(cli, 10)
    assert len(_slices(members, tmp_path, "member2")) == 1

    write(state / "apps" / "web.yaml", SVC_AND_MCS.split("---")[0])
    reconcile(cli, 20)
    assert _slices(members, tmp_path, "member2") == []
    assert members["member2"].get_object("v1", "Service", "default", "web") is None
    assert computed(state, "resourcebindings", "default", "web-service.json") is None
    assert not list((state / "computed" / "works").rglob("*.json"))
    # the provider's own slice is the provider's: untouched
    assert [s["metadata"]["name"] for s in _slices(members, tmp_path, "member1")] == ["web-abcde"]
