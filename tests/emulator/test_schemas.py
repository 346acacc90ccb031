"""Built-in kinds through their OpenAPI schemas, as a user of an emulated member sees it: kubectl's
strict validation, explain, describe and auth can-i, defaults, and the API's 400/422 answers.
(``test_differential.py`` checks the same against a real kube-apiserver when one can run.)"""
from __future__ import annotations

import json
import urllib.request

import yaml

from .conftest import deployment, raw


def test_kubectl_strict_validation_refuses_unknown_fields(kubectl):
    bad = deployment("strict")
    bad["spec"]["replicaz"] = 2
    res = kubectl.run("apply", "--validate=strict", "-f", "-", input=yaml.safe_dump(bad), check=False)
    assert res.returncode != 0 and 'unknown field "spec.replicaz"' in res.stderr
    assert kubectl.run("get", "deployment", "strict", check=False).returncode != 0  # nothing created
    # without strict validation the field is dropped, as kube-apiserver's decoder does
    kubectl.run("apply", "--validate=false", "-f", "-", input=yaml.safe_dump(bad))
    assert "replicaz" not in kubectl.json("get", "deployment", "strict")["spec"]


def test_kubectl_describe_explain_and_can_i(kubectl):
    kubectl.run("apply", "-f", "-", input=yaml.safe_dump(deployment("web")))
    described = kubectl.run("describe", "deployment", "web").stdout
    assert "StrategyType:           RollingUpdate" in described
    assert "RollingUpdateStrategy:  25% max unavailable, 25% max surge" in described
    explained = kubectl.run("explain", "deployment.spec").stdout
    assert "revisionHistoryLimit\t<integer>" in explained and "strategy\t<DeploymentStrategy>" in explained
    assert kubectl.run("auth", "can-i", "create", "deployments").stdout.strip() == "yes"


def test_defaults_of_propagated_kinds(member):
    code, obj = raw(member.url, "POST", "/apis/apps/v1/namespaces/default/deployments",
                    json.dumps(deployment("web", image="nginx")).encode())
    assert code == 201
    spec = obj["spec"]
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    container = spec["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "Always"  # untagged image
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert "generation" in obj["metadata"] and obj["status"] == {}

    code, svc = raw(member.url, "POST", "/api/v1/namespaces/default/services", json.dumps(
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
         "spec": {"type": "NodePort", "ports": [{"port": 80}]}}).encode())
    assert code == 201
    assert svc["spec"]["sessionAffinity"] == "None" and svc["spec"]["externalTrafficPolicy"] == "Cluster"
    assert svc["spec"]["ports"][0]["targetPort"] == 80 and 30000 <= svc["spec"]["ports"][0]["nodePort"] <= 32767
    assert "generation" not in svc["metadata"]

    code, secret = raw(member.url, "POST", "/api/v1/namespaces/default/secrets", json.dumps(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"user": "admin"}}).encode())
    assert secret["type"] == "Opaque" and secret["data"] == {"user": "YWRtaW4="} and "stringData" not in secret

    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "a", "image": "busybox:1.36"}]}}}}}}
    code, cron = raw(member.url, "POST", "/apis/batch/v1/namespaces/default/cronjobs", json.dumps(cron).encode())
    assert cron["spec"]["concurrencyPolicy"] == "Allow" and cron["spec"]["successfulJobsHistoryLimit"] == 3
    assert "backoffLimit" not in cron["spec"]["jobTemplate"]["spec"]  # Job defaults are for Jobs only


def test_type_and_required_errors(member):
    wrong = deployment("bad")
    wrong["spec"]["replicas"] = "three"
    code, status = raw(member.url, "POST", "/apis/apps/v1/namespaces/default/deployments", json.dumps(wrong).encode())
    assert (code, status["reason"]) == (400, "BadRequest") and "spec.replicas" in status["message"]
    missing = deployment("bad")
    del missing["spec"]["template"]["spec"]["containers"][0]["name"]
    code, status = raw(member.url, "POST", "/apis/apps/v1/namespaces/default/deployments", json.dumps(missing).encode())
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value",
                                            "field": "spec.template.spec.containers[0].name"}]


def test_unknown_fields_warn_by_default(member):
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"},
                       "bogus": 1}).encode()
    req = urllib.request.Request(member.url + "/api/v1/namespaces/default/configmaps", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.headers.get_all("Warning") == ['299 - "unknown field \\"bogus\\""']
        assert "bogus" not in json.loads(resp.read())
    code, status = raw(member.url, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
                       body.replace(b'"c"', b'"d"'))
    assert (code, status["reason"]) == (400, "BadRequest") and 'unknown field "bogus"' in status["message"]


def test_openapi_v2_serves_the_schemas_as_json(member):
    code, doc = raw(member.url, "GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert code == 200 and doc["swagger"] == "2.0"
    spec = doc["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]
    assert spec["required"] == ["selector", "template"]
    assert spec["properties"]["strategy"]["$ref"] == "#/definitions/io.k8s.api.apps.v1.DeploymentStrategy"
    code, _ = raw(member.url, "GET", "/openapi/v2",
                  headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    assert code == 406
