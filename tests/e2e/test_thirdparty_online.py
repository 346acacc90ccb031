"""The built-in third-party interpreter online: a CloneSet, a Flux HelmRelease and a
FlinkDeployment (with their CRDs, propagated first) on two emulated members; the CloneSet's
replicas divided 2 + 2 and revised on each member, the members' statuses read through the
built-in rules into health and aggregated template status."""
from __future__ import annotations

import yaml

from tests.interpreter.thirdparty.samples import SAMPLES
from tests.interpreter.thirdparty.test_propagation import crd, policy

from .conftest import reconcile_until

KINDS = ("CloneSet", "HelmRelease", "FlinkDeployment")
USED = [s for s in SAMPLES if s.kind in KINDS]


def crd_with_status(sample) -> dict:
    doc = crd(sample)
    doc["spec"]["versions"][0]["subresources"] = {"status": {}}  # members' controllers own the status
    return doc


CRD_POLICY = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
              "metadata": {"name": "crds"},
              "spec": {"resourceSelectors": [{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                                              "name": s.resource} for s in USED],
                       "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}}


def test_cloneset_helmrelease_and_flinkdeployment_online(state, tmp_path, cli, members, member_layer):
    servers = {"member1": members.start("member1"), "member2": members.start("member2")}
    docs = [crd_with_status(s) for s in USED] + [CRD_POLICY] + [s.object() for s in USED]
    docs += [policy("PropagationPolicy", "divided", [s for s in USED if s.divided], True),
             policy("PropagationPolicy", "duplicated", [s for s in USED if not s.divided], False)]
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump_all(docs))
    cli.ok("apply", "-f", str(tmp_path / "fleet.yaml"))

    def copies(sample) -> dict:
        return {name: srv.get_object(sample.api_version, sample.kind, "default", "sample")
                for name, srv in servers.items()}

    reconcile_until(cli, lambda: all(all(copies(s).values()) for s in USED), timeout=60)
    cloneset = next(s for s in USED if s.kind == "CloneSet")
    assert {m: c["spec"]["replicas"] for m, c in copies(cloneset).items()} == {"member1": 2, "member2": 2}

    # the members report: member1 healthy, member2 not (as each sample's status says), at the
    # generation the member's copy has
    for sample in USED:
        for member, copy in copies(sample).items():
            status = dict(sample.status[member])
            if "observedGeneration" in status:
                status["observedGeneration"] = copy["metadata"]["generation"]
            servers[member].set_status(sample.api_version, sample.kind, "default", "sample", status)

    def health(sample) -> dict:
        rb = yaml.safe_load(cli.ok("get", "rb", f"sample-{sample.kind.lower()}", "-n", "default", "-o", "yaml"))
        return {i["clusterName"]: i.get("health") for i in (rb.get("status") or {}).get("aggregatedStatus") or []}

    reconcile_until(cli, lambda: all(health(s) == s.health for s in USED), timeout=60)
    for sample in USED:
        status = yaml.safe_load(cli.ok("get", sample.resource, "sample", "-n", "default", "-o", "yaml"))["status"]
        for key, value in sample.aggregated.items():
            if key != "observedGeneration":
                assert status.get(key) == value, (sample.kind, key, status)
    code, _out, err = cli("reconcile")
    assert code == 0 and "warning" not in err, err
