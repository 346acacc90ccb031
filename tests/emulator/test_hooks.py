"""Test hooks and lifecycle: health, stop/start, hangs, latency, request log, nodes, fake controller,
persistence across restarts and processes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from kubernetes.client.exceptions import ApiException

from karmactl.emulator import MemberServer

from .conftest import deployment, make_dynamic, raw


def _post(url: str, hook: str, body: dict) -> dict:
    code, out = raw(url, "POST", f"/_emulator/{hook}", json.dumps(body).encode())
    assert code == 200, out
    return out


def test_health_states(member, dyn):
    assert raw(member.url, "GET", "/readyz") == (200, "ok")
    member.set_health("unready")
    assert raw(member.url, "GET", "/readyz")[0] == 503
    assert raw(member.url, "GET", "/healthz")[0] == 503
    assert raw(member.url, "GET", "/livez")[0] == 200
    # unready: the API still works
    assert dyn.resources.get(api_version="v1", kind="Namespace").get(name="default")
    member.set_health("broken")
    code, status = raw(member.url, "GET", "/api/v1/namespaces")
    assert code == 503 and status["reason"] == "ServiceUnavailable"
    with pytest.raises(ApiException) as e:
        dyn.request("GET", "/readyz", serialize=False)
    assert e.value.status == 503
    # the hooks stay reachable while broken
    _post(member.url, "health", {"health": "ok"})
    assert raw(member.url, "GET", "/readyz") == (200, "ok")
    with pytest.raises(ValueError):
        member.set_health("sick")


def test_stop_refuses_connections_and_start_keeps_state(member, dyn):
    dyn.resources.get(api_version="v1", kind="ConfigMap").create(
        body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}}, namespace="default")
    port = member.port
    member.stop()
    with pytest.raises(urllib.error.URLError) as e:
        urllib.request.urlopen(member.url + "/readyz", timeout=2)
    assert isinstance(e.value.reason, ConnectionRefusedError)
    # the client's pooled keep-alive connection was cut too: no answer, no hang
    with pytest.raises(Exception):
        dyn.request("GET", "/api/v1/namespaces/default/configmaps/keep", _request_timeout=2)
    member.start()
    assert member.port == port
    got = dyn.request("GET", "/api/v1/namespaces/default/configmaps/keep").to_dict()
    assert got["metadata"]["name"] == "keep"


def test_hang_and_latency(member, kubeconfig, tmp_path):
    dyn = make_dynamic(kubeconfig, str(tmp_path / "d.json"))
    dyn.resources.get(api_version="v1", kind="ConfigMap")  # discovery before the hang
    member.set_hang(True, max_seconds=10)
    t0 = time.monotonic()
    with pytest.raises(Exception):
        dyn.request("GET", "/api/v1/namespaces", _request_timeout=0.5)
    assert time.monotonic() - t0 < 3
    _post(member.url, "hang", {"hang": False})
    assert raw(member.url, "GET", "/readyz") == (200, "ok")
    member.set_hang(True, max_seconds=0.3)  # a bounded hang then serves normally
    assert raw(member.url, "GET", "/readyz") == (200, "ok")
    member.set_hang(False)
    member.set_latency(0.3)
    t0 = time.monotonic()
    raw(member.url, "GET", "/version")
    assert time.monotonic() - t0 >= 0.3
    member.set_latency(0)


def test_request_log(member, dyn):
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    member.clear_request_log()
    cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, namespace="default")
    cms.get(namespace="default", label_selector="x=y")
    cms.patch(name="a", namespace="default", body={"data": {"k": "v"}}, content_type="application/merge-patch+json")
    cms.delete(name="a", namespace="default")
    log = member.request_log
    assert [e["method"] for e in log] == ["POST", "GET", "PATCH", "DELETE"]
    assert log[1]["query"] == "labelSelector=x%3Dy" and log[0]["status"] == 201
    assert log[2]["content_type"] == "application/merge-patch+json"
    assert member.write_count() == 3
    code, out = raw(member.url, "GET", "/_emulator/requests")
    assert out["writeCount"] == 3 and len(out["items"]) == 4
    raw(member.url, "DELETE", "/_emulator/requests")
    assert member.request_log == [] and member.write_count() == 0


def test_nodes_status_and_object_hooks(member, dyn):
    member.add_node("n1", cpu="8", memory="32Gi", pods="110")
    _post(member.url, "nodes", {"name": "n2", "cpu": "4"})
    nodes = dyn.resources.get(api_version="v1", kind="Node").get().to_dict()["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["n1", "n2"]
    assert nodes[0]["status"]["allocatable"] == {"cpu": "8", "memory": "32Gi", "pods": "110",
                                                 "ephemeral-storage": "100Gi"}
    assert nodes[1]["status"]["capacity"]["cpu"] == "4"
    dyn.resources.get(api_version="apps/v1", kind="Deployment").create(body=deployment(), namespace="default")
    _post(member.url, "status", {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                                 "name": "web", "status": {"readyReplicas": 2}})
    assert member.get_object("apps/v1", "Deployment", "default", "web")["status"] == {"readyReplicas": 2}
    code, obj = raw(member.url, "GET", "/_emulator/objects?apiVersion=apps/v1&kind=Deployment&namespace=default&name=web")
    assert code == 200 and obj["status"]["readyReplicas"] == 2
    assert len(member.list_objects("v1", "Namespace")) >= 3
    code, state = raw(member.url, "GET", "/_emulator/state")
    assert state["name"] == "member1" and state["health"] == "ok" and state["port"] == member.port


def test_fake_controller(tmp_path):
    srv = MemberServer(name="m", data_dir=None, fake_controller=True, fake_delay=0.2, nodes=3).start()
    try:
        assert len(srv.list_objects("v1", "Node")) == 3
        kc = srv.write_kubeconfig(str(tmp_path / "kc"))
        from kubernetes import config, dynamic
        dyn = dynamic.DynamicClient(config.new_client_from_config(config_file=kc, context="m"),
                                    cache_file=str(tmp_path / "d.json"))
        dyn.resources.get(api_version="apps/v1", kind="Deployment").create(body=deployment(replicas=3),
                                                                           namespace="default")
        dyn.resources.get(api_version="v1", kind="Pod").create(body={
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}, namespace="default")
        dyn.resources.get(api_version="batch/v1", kind="Job").create(body={
            "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}},
            namespace="default")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            d = srv.get_object("apps/v1", "Deployment", "default", "web")
            p = srv.get_object("v1", "Pod", "default", "p")
            j = srv.get_object("batch/v1", "Job", "default", "j")
            if d.get("status", {}).get("readyReplicas") == 3 and p["status"]["phase"] == "Running" \
                    and j.get("status", {}).get("succeeded") == 1:
                break
            time.sleep(0.05)
        st = d["status"]
        assert st["replicas"] == st["availableReplicas"] == st["updatedReplicas"] == st["readyReplicas"] == 3
        assert st["observedGeneration"] == 1
        assert p["status"]["phase"] == "Running"
        assert any(c["type"] == "Complete" and c["status"] == "True" for c in j["status"]["conditions"])
        # a spec change is picked up again, and the controller does not keep writing afterwards
        dyn.resources.get(api_version="apps/v1", kind="Deployment").patch(
            name="web", namespace="default", body={"spec": {"replicas": 1}},
            content_type="application/merge-patch+json")
        time.sleep(0.6)
        d = srv.get_object("apps/v1", "Deployment", "default", "web")
        assert d["status"]["readyReplicas"] == 1 and d["status"]["observedGeneration"] == 2
        rv = srv.store.resource_version
        time.sleep(0.4)
        assert srv.store.resource_version == rv
    finally:
        srv.close()


def test_persistence_across_stop_start_and_new_server(tmp_path):
    data = str(tmp_path / "m")
    srv = MemberServer(name="m", data_dir=data).start()
    rt = srv.catalogue.lookup("", "v1", "configmaps")
    srv.store.create(rt, "default", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}})
    crd_rt = srv.catalogue.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    srv.store.create(crd_rt, None, {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                                    "metadata": {"name": "things.ex.io"},
                                    "spec": {"group": "ex.io", "scope": "Namespaced",
                                             "names": {"plural": "things", "kind": "Thing"},
                                             "versions": [{"name": "v1", "served": True, "storage": True}]}})
    srv.store.create(srv.catalogue.lookup("ex.io", "v1", "things"), "default",
                     {"apiVersion": "ex.io/v1", "kind": "Thing", "metadata": {"name": "t"}})
    rv = srv.store.resource_version
    port = srv.port
    srv.close()
    assert os.path.exists(os.path.join(data, "objects.json"))
    again = MemberServer(name="m", data_dir=data, port=port).start()
    try:
        assert again.get_object("v1", "ConfigMap", "default", "p")["metadata"]["name"] == "p"
        assert again.get_object("ex.io/v1", "Thing", "default", "t") is not None
        assert again.store.resource_version == rv
        code, body = raw(again.url, "GET", "/apis/ex.io/v1")
        assert code == 200 and body["resources"][0]["name"] == "things"
        # history from before the restart is gone: an old watch is told to relist (410 ERROR event)
        code, event = raw(again.url, "GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1")
        assert code == 200 and event["type"] == "ERROR" and event["object"]["code"] == 410
    finally:
        again.close()


def _serve(data: str, *extra: str) -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen([sys.executable, "-m", "karmactl.emulator", "serve", "--name", "bg", "--port", "0",
                             "--data-dir", data, *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    info_path = os.path.join(data, "server.json")
    deadline = time.monotonic() + 15
    while not os.path.exists(info_path):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"member did not start: {proc.stderr.read().decode()}")
        time.sleep(0.05)
    with open(info_path) as f:
        return proc, json.load(f)


def test_background_process_keeps_state(tmp_path):
    data = str(tmp_path / "bg")
    proc, info = _serve(data, "--nodes", "2")
    try:
        assert info["pid"] == proc.pid and info["url"] == f"http://127.0.0.1:{info['port']}"
        assert os.path.exists(os.path.join(data, "kubeconfig"))
        from kubernetes import config, dynamic
        dyn = dynamic.DynamicClient(config.new_client_from_config(
            config_file=os.path.join(data, "kubeconfig"), context="bg"), cache_file=str(tmp_path / "d.json"))
        dyn.resources.get(api_version="v1", kind="ConfigMap").create(
            body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "survivor"}}, namespace="default")
        assert len(dyn.resources.get(api_version="v1", kind="Node").get().to_dict()["items"]) == 2
        _post(info["url"], "health", {"health": "unready"})
        assert raw(info["url"], "GET", "/readyz")[0] == 503
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    assert not os.path.exists(os.path.join(data, "server.json"))
    proc, info2 = _serve(data, "--nodes", "2")
    try:
        code, cm = raw(info2["url"], "GET", "/api/v1/namespaces/default/configmaps/survivor")
        assert code == 200 and cm["metadata"]["name"] == "survivor"
        code, nodes = raw(info2["url"], "GET", "/api/v1/nodes")
        assert len(nodes["items"]) == 2
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def test_outage_hook_over_http(member):
    _post(member.url, "outage", {"seconds": 0.6})
    time.sleep(0.2)
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(member.url + "/readyz", timeout=2)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            assert urllib.request.urlopen(member.url + "/readyz", timeout=2).status == 200
            break
        except urllib.error.URLError:
            time.sleep(0.1)
    else:
        raise AssertionError("member did not come back after the outage")
    _post(member.url, "fake-controller", {"enabled": True, "delay": 0.1})
    assert raw(member.url, "GET", "/_emulator/state")[1]["fakeController"] is True
