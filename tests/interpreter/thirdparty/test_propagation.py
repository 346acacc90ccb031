"""The built-in third-party interpreter end to end, offline, through the CLI: one sample of each
of the 27 kinds is applied with its CRD, propagated to two members (Divided with static weights
1:1 where the kind has replicas, else Duplicated), each member's status is recorded with
``karmactl observe``, and the next run's binding, Works and template status are read back."""
from __future__ import annotations

import contextlib
import io
import json

import pytest
import yaml

from karmactl.cli.main import main_exit_code
from tests.conftest import NOW

from .samples import SAMPLES

CLUSTERS = ("member1", "member2")


class Runner:
    """``karmactl`` in-process on one state directory for a module's shared fixture."""

    def __init__(self, state):
        self.state = state

    def __call__(self, *args: str) -> str:
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main_exit_code(["--state", str(self.state), *args])
        assert code == 0, f"karmactl {' '.join(args)} exited {code}: {stderr.getvalue()}"
        return stdout.getvalue()


def crd(sample) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": sample.resource},
            "spec": {"group": sample.group, "scope": "Namespaced" if sample.namespaced else "Cluster",
                     "names": {"kind": sample.kind, "plural": sample.plural, "singular": sample.kind.lower(),
                               "listKind": sample.kind + "List"},
                     "versions": [{"name": sample.api_version.split("/")[1], "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                                                  "x-kubernetes-preserve-unknown-fields": True}}}]}}


def cluster(name: str) -> dict:
    enablements = {}
    for s in SAMPLES:
        enablements.setdefault(s.api_version, []).append({"name": s.plural, "kind": s.kind})
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
            "spec": {"syncMode": "Push", "apiEndpoint": f"https://{name}.example:6443"},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady", "message": "ready",
                                       "lastTransitionTime": "2025-12-31T00:00:00Z"}],
                       "apiEnablements": [{"groupVersion": gv, "resources": r} for gv, r in enablements.items()]}}


def policy(kind: str, name: str, samples, divided: bool) -> dict:
    placement: dict = {"clusterAffinity": {"clusterNames": list(CLUSTERS)}}
    if divided:
        placement["replicaScheduling"] = {
            "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [{"targetCluster": {"clusterNames": [c]}, "weight": 1}
                                                      for c in CLUSTERS]}}
    md = {"name": name} if kind == "ClusterPropagationPolicy" else {"name": name, "namespace": "default"}
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": kind, "metadata": md,
            "spec": {"resourceSelectors": [{"apiVersion": s.api_version, "kind": s.kind, "name": "sample"}
                                           for s in samples], "placement": placement}}


def binding_name(sample) -> str:
    return f"sample-{sample.kind.lower()}"


@pytest.fixture(scope="module")
def propagated(tmp_path_factory):
    """``{kind resource: {"binding", "works": {cluster: manifest}, "template"}}`` after the runs."""
    state = tmp_path_factory.mktemp("thirdparty") / "state"
    state.mkdir()
    run = Runner(state)
    docs = [cluster(c) for c in CLUSTERS] + [crd(s) for s in SAMPLES] + [s.object() for s in SAMPLES]
    for divided in (True, False):
        name = "divided" if divided else "duplicated"
        docs.append(policy("PropagationPolicy", name, [s for s in SAMPLES if s.namespaced and s.divided == divided],
                           divided))
    docs.append(policy("ClusterPropagationPolicy", "cluster-scoped", [s for s in SAMPLES if not s.namespaced], False))
    (state / "fleet.yaml").write_text(yaml.safe_dump_all(docs))
    run("reconcile", "--offline", "--now", NOW)
    status_dir = state.parent / "observed"
    status_dir.mkdir()
    for s in SAMPLES:
        for member, status in s.status.items():
            path = status_dir / f"{s.plural}-{member}.yaml"
            path.write_text(yaml.safe_dump({"status": status}))
            run("observe", f"{s.resource}/sample", "--cluster", member, "--status-file", str(path))
    run("reconcile", "--offline", "--now", NOW)
    rbs = {b["metadata"]["name"]: b for b in json.loads(run("get", "rb", "-A", "-o", "json"))["items"]}
    crbs = {b["metadata"]["name"]: b for b in json.loads(run("get", "crb", "-o", "json"))["items"]}
    works = json.loads(run("get", "works", "-A", "-o", "json"))["items"]
    found = {}
    for s in SAMPLES:
        binding = (rbs if s.namespaced else crbs)[binding_name(s)]
        manifests = {}
        for work in works:
            manifest = work["spec"]["workload"]["manifests"][0]
            if (manifest["apiVersion"], manifest["kind"], manifest["metadata"]["name"]) == \
                    (s.api_version, s.kind, "sample"):
                manifests[work["metadata"]["namespace"].removeprefix("karmada-es-")] = manifest
        template = json.loads(run("get", s.resource, "sample", *(["-n", "default"] if s.namespaced else []),
                                  "-o", "json"))
        found[s.resource] = {"binding": binding, "works": manifests, "template": template}
    return found


def _dig(obj, path):
    for key in path:
        obj = obj[key]
    return obj


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.resource for s in SAMPLES])
def test_replicas_split_as_karmada_splits_them(propagated, sample):
    seen = propagated[sample.resource]
    spec = seen["binding"]["spec"]
    assert spec.get("replicas") == sample.replicas
    targets = {t["name"]: t.get("replicas", 0) for t in spec.get("clusters") or []}
    if sample.divided:
        assert sorted(targets.values()) == sample.split
    else:
        assert targets == dict.fromkeys(CLUSTERS, 0)
    assert set(seen["works"]) == set(targets)
    for member, manifest in seen["works"].items():
        if sample.revised:
            assert _dig(manifest, sample.revised) == targets[member] - sample.revised_less
        else:  # no ReviseReplica rule: the template goes out as it is
            assert manifest["spec"] == sample.spec


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.resource for s in SAMPLES])
def test_health_and_aggregated_status_as_karmada_rules_give(propagated, sample):
    seen = propagated[sample.resource]
    items = {i["clusterName"]: i for i in seen["binding"]["status"]["aggregatedStatus"]}
    assert {c: i.get("health") for c, i in items.items()} == sample.health
    status = seen["template"].get("status") or {}
    for key, value in sample.aggregated.items():
        assert status.get(key) == value, (key, status)
