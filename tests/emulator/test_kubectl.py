"""The real kubectl against an emulated member: apply (with validation), get, tables, wait, delete, CRDs."""
from __future__ import annotations

import ipaddress
import subprocess
import threading
import time

import pytest

from karmactl.emulator import MemberServer

from .conftest import KUBECTL, Kubectl

pytestmark = pytest.mark.e2e

MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  labels: {app: web}
data:
  a: "1"
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
"""

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wg]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"""


def test_apply_get_and_reapply(kubectl, member):
    out = kubectl.run("apply", "-f", "-", input=MANIFESTS)
    assert "deployment.apps/web created" in out.stdout and "configmap/cfg created" in out.stdout
    assert "warning" not in out.stderr.lower()
    again = kubectl.run("apply", "-f", "-", input=MANIFESTS)
    assert "deployment.apps/web unchanged" in again.stdout and "service/web unchanged" in again.stdout
    member.clear_request_log()
    changed = MANIFESTS.replace("nginx:1.25", "nginx:1.26")
    out = kubectl.run("apply", "-f", "-", input=changed)
    assert "deployment.apps/web configured" in out.stdout
    assert member.write_count() == 1  # only the deployment was patched
    jp = kubectl.run("get", "deploy", "web", "-o",
                     "jsonpath={.spec.template.spec.containers[0].image} {.metadata.generation}").stdout
    assert jp == "nginx:1.26 2"
    assert kubectl.json("get", "cm", "cfg")["data"] == {"a": "1"}
    cluster_ip = kubectl.run("get", "svc", "web", "-o", "jsonpath={.spec.clusterIP}").stdout
    assert ipaddress.ip_address(cluster_ip) in ipaddress.ip_network("10.96.0.0/12")  # the service CIDR
    yaml_out = kubectl.run("get", "deploy", "web", "-o", "yaml").stdout
    assert "kind: Deployment" in yaml_out


def test_table_output(kubectl, member):
    kubectl.run("apply", "-f", "-", input=MANIFESTS)
    member.set_status("apps/v1", "Deployment", "default", "web",
                      {"replicas": 2, "readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1})
    lines = kubectl.run("get", "deploy").stdout.splitlines()
    assert lines[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert lines[1].split()[:4] == ["web", "1/2", "2", "1"]
    kubectl.run("apply", "-f", "-", input="""
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  containers: [{name: c, image: busybox}]
""")
    lines = kubectl.run("get", "pods").stdout.splitlines()
    assert lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert lines[1].split()[:4] == ["p1", "0/1", "Pending", "0"]
    lines = kubectl.run("get", "cm", "-A", "--show-labels").stdout.splitlines()
    assert lines[0].split()[:2] == ["NAMESPACE", "NAME"] and lines[0].split()[-1] == "LABELS"
    assert any(line.split()[:2] == ["default", "cfg"] and "app=web" in line for line in lines)
    assert kubectl.run("get", "cm", "cfg", "--no-headers").stdout.split()[0] == "cfg"
    names = kubectl.run("get", "deploy,cm", "-o", "name").stdout.split()
    assert "deployment.apps/web" in names and "configmap/cfg" in names


def test_wait_and_watch(kubectl, member):
    kubectl.run("apply", "-f", "-", input=MANIFESTS)

    def later():
        time.sleep(0.7)
        member.set_status("apps/v1", "Deployment", "default", "web", {"readyReplicas": 2, "replicas": 2})

    threading.Thread(target=later, daemon=True).start()
    t0 = time.monotonic()
    out = kubectl.run("wait", "--for=jsonpath={.status.readyReplicas}=2", "deploy/web", "--timeout=10s")
    assert "condition met" in out.stdout and time.monotonic() - t0 < 8
    proc = subprocess.Popen([KUBECTL, "--kubeconfig", kubectl.kubeconfig, "--cache-dir", str(kubectl.cache_dir),
                             "get", "cm", "-w", "--request-timeout=3s"], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    kubectl.run("apply", "-f", "-", input="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late}\n")
    time.sleep(0.7)
    proc.terminate()
    out, _ = proc.communicate(timeout=10)
    assert "cfg" in out and "late" in out


def test_delete(kubectl, member):
    kubectl.run("apply", "-f", "-", input=MANIFESTS)
    out = kubectl.run("delete", "-f", "-", input=MANIFESTS, timeout=20)
    assert 'deployment.apps "web" deleted' in out.stdout
    assert member.get_object("apps/v1", "Deployment", "default", "web") is None
    kubectl.run("apply", "-f", "-", input="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone}\n")
    threading.Timer(0.5, lambda: kubectl.run("delete", "cm", "gone", "--wait=false")).start()
    assert "condition met" in kubectl.run("wait", "--for=delete", "cm/gone", "--timeout=10s").stdout
    res = kubectl.run("get", "deploy", "web", check=False)
    assert res.returncode != 0 and "NotFound" in res.stderr


def test_crd_then_custom_resource(kubectl, member):
    kubectl.run("apply", "-f", "-", input=CRD)
    kubectl.run("wait", "--for", "condition=established", "crd/widgets.example.com", "--timeout=5s")
    cr = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 3}\n"
    assert "widget.example.com/w1 created" in kubectl.run("apply", "-f", "-", input=cr).stdout
    assert "configured" in kubectl.run("apply", "-f", "-", input=cr.replace("3", "4")).stdout
    assert kubectl.run("get", "wg", "w1", "-o", "jsonpath={.spec.size}").stdout == "4"
    lines = kubectl.run("get", "widgets").stdout.splitlines()
    assert lines[0].split() == ["NAME", "AGE"] and lines[1].split()[0] == "w1"


def test_server_side_apply_with_kubectl(kubectl):
    kubectl.run("apply", "--server-side", "-f", "-", input=MANIFESTS)
    conflict = kubectl.run("apply", "--server-side", "--field-manager", "other", "-f", "-",
                           input=MANIFESTS.replace("replicas: 2", "replicas: 3"), check=False)
    assert conflict.returncode != 0 and "conflict" in conflict.stderr.lower()
    kubectl.run("apply", "--server-side", "--force-conflicts", "--field-manager", "other", "-f", "-",
                input=MANIFESTS.replace("replicas: 2", "replicas: 3"))
    assert kubectl.run("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "3"


def test_tls_member(tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl not installed")
    srv = MemberServer(name="secure", data_dir=str(tmp_path / "secure"), tls=True).start()
    try:
        assert srv.url.startswith("https://")
        kc = srv.write_kubeconfig(str(tmp_path / "kc"))
        assert "certificate-authority-data" in open(kc).read()
        k = Kubectl(kc, tmp_path / "cache")
        k.run("apply", "-f", "-", input="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tls}\n")
        assert k.run("get", "cm", "tls", "-o", "jsonpath={.metadata.name}").stdout == "tls"
        from kubernetes import config, dynamic

        api = config.new_client_from_config(config_file=kc, context="secure")
        dyn = dynamic.DynamicClient(api, cache_file=str(tmp_path / "d.json"))
        assert dyn.resources.get(api_version="v1", kind="ConfigMap").get(name="tls", namespace="default")
    finally:
        srv.close()
