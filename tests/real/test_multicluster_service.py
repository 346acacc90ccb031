"""MultiClusterService against real v1.20 kube-apiservers: they serve no discovery.k8s.io/v1
EndpointSlices, so Karmada's controllers skip them as providers and consumers (APIIncompatible)
while the Service itself still lands on every provider and consumer."""
from __future__ import annotations

import json

from .conftest import converge, get_json, write_yaml


def test_members_without_endpointslice_v1_get_the_service_but_no_endpointslice_works(cli, joined, ns, tmp_path):
    write_yaml(tmp_path / "in" / "web.yaml",
               {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": ns},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP"}]}},
               {"apiVersion": "networking.karmada.io/v1alpha1", "kind": "MultiClusterService",
                "metadata": {"name": "web", "namespace": ns},
                "spec": {"types": ["CrossCluster"], "providerClusters": [{"name": "member1"}],
                         "consumerClusters": [{"name": "member2"}]}})
    cli.ok("apply", "-f", str(tmp_path / "in"))
    err = converge(cli)
    assert "APIIncompatible: Provider cluster member1 does not support EndpointSlice" in err
    for member in joined.values():
        assert get_json(member, "service", "web", "-n", ns) is not None
    works = json.loads(cli.ok("get", "works", "-A", "-o", "json"))["items"]
    kinds = {w["spec"]["workload"]["manifests"][0]["kind"] for w in works
             if w["spec"]["workload"]["manifests"][0]["metadata"].get("namespace") == ns}
    assert kinds == {"Service"}
    mcs = json.loads(cli.ok("get", "mcs", "web", "-n", ns, "-o", "json"))
    assert {c["type"]: c["status"] for c in mcs["status"]["conditions"]} == {"ServiceApplied": "True"}
