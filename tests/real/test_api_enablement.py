"""APIs a member does not serve: the Cluster's ``status.apiEnablements`` as probed from a real
v1.20 server, and the scheduler's APIEnablement filter keeping workloads off such members."""
from __future__ import annotations

import json

import pytest

from .conftest import converge, get_json, write_yaml


def _cronjob(ns, api_version) -> dict:
    return {"apiVersion": api_version, "kind": "CronJob", "metadata": {"name": "hello", "namespace": ns},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "hello", "image": "busybox"}]}}}}}}


def _policy(ns, api_version, kind, name) -> dict:
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"resourceSelectors": [{"apiVersion": api_version, "kind": kind, "name": name}],
                     "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}}


def _kinds(cluster: dict, group_version: str) -> list[str]:
    for item in cluster["status"]["apiEnablements"]:
        if item["groupVersion"] == group_version:
            return sorted(r["kind"] for r in item["resources"])
    return []


def test_apienablements_are_read_from_the_member(cli, joined):
    converge(cli)
    cluster = json.loads(cli.ok("get", "cluster", "member1", "-o", "json"))
    conds = {c["type"]: c["status"] for c in cluster["status"]["conditions"]}
    assert conds["CompleteAPIEnablements"] == "True"
    assert _kinds(cluster, "batch/v1") == ["Job"]  # v1.20: CronJob only in batch/v1beta1
    assert _kinds(cluster, "batch/v1beta1") == ["CronJob"]
    assert _kinds(cluster, "apps/v1") == ["ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"]
    assert _kinds(cluster, "policy/v1") == [] and _kinds(cluster, "autoscaling/v2") == []


def test_a_kind_no_member_serves_is_scheduled_nowhere_and_describe_says_why(cli, joined, ns, tmp_path):
    write_yaml(tmp_path / "in" / "cronjob.yaml", _cronjob(ns, "batch/v1"), _policy(ns, "batch/v1", "CronJob", "hello"))
    cli.ok("apply", "-f", str(tmp_path / "in"))
    converge(cli)
    for member in joined.values():
        assert get_json(member, "cronjobs.v1beta1.batch", "hello", "-n", ns) is None
    rb = json.loads(cli.ok("get", "rb", "hello-cronjob", "-n", ns, "-o", "json"))
    scheduled = {c["type"]: c for c in rb["status"]["conditions"]}["Scheduled"]
    assert (scheduled["status"], scheduled["reason"]) == ("False", "NoClusterFit")
    assert scheduled["message"] == "0/2 clusters are available: 2 cluster(s) did not have the API resource."
    described = cli.ok("describe", "rb", "hello-cronjob", "-n", ns)
    for name in ("member1", "member2"):
        assert f"{name}  cluster(s) did not have the API resource" in described



CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.real.karmactl.io"},
    "spec": {"group": "real.karmactl.io", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object",
                                                           "properties": {"size": {"type": "integer"}}}}}}}]}}


@pytest.fixture
def widget_crd_on_member1(real_members, cli):
    """The Widget CRD installed on member1 only, by someone else (kubectl), not by karmactl."""
    m1 = real_members["member1"]
    m1.kubectl("apply", "-f", "-", input=json.dumps(CRD))
    m1.kubectl("wait", "--for=condition=Established", "crd/widgets.real.karmactl.io", "--timeout=60s")
    yield
    m1.kubectl("delete", "crd", "widgets.real.karmactl.io", "--ignore-not-found", "--timeout=60s")


def test_a_custom_resource_goes_only_to_the_member_serving_its_crd(cli, joined, ns, tmp_path, widget_crd_on_member1):
    widget = {"apiVersion": "real.karmactl.io/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": ns},
              "spec": {"size": 3}}
    write_yaml(tmp_path / "in" / "widget.yaml", CRD, widget, _policy(ns, "real.karmactl.io/v1", "Widget", "w"))
    cli.ok("apply", "-f", str(tmp_path / "in"))
    converge(cli)
    m1, m2 = joined["member1"], joined["member2"]
    assert get_json(m1, "widgets.real.karmactl.io", "w", "-n", ns)["spec"] == {"size": 3}
    assert get_json(m2, "crd", "widgets.real.karmactl.io") is None
    rb = json.loads(cli.ok("get", "rb", "w-widget", "-n", ns, "-o", "json"))
    assert rb["spec"]["clusters"] == [{"name": "member1"}]
    assert "member2  cluster(s) did not have the API resource" in cli.ok("describe", "rb", "w-widget", "-n", ns)
