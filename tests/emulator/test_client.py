"""The official Python client (DynamicClient) against an emulated member over real HTTP."""
from __future__ import annotations

import copy
import json
import threading
import time

import pytest
from kubernetes.dynamic.exceptions import ApiException, ConflictError, NotFoundError, UnprocessibleEntityError

from .conftest import deployment, raw


def _deploys(dyn):
    return dyn.resources.get(api_version="apps/v1", kind="Deployment")


def _cms(dyn):
    return dyn.resources.get(api_version="v1", kind="ConfigMap")


def test_crud_metadata_and_conflict(dyn):
    api = _deploys(dyn)
    created = api.create(body=deployment(), namespace="default").to_dict()
    md = created["metadata"]
    assert md["uid"] and md["creationTimestamp"].endswith("Z") and md["generation"] == 1
    assert int(md["resourceVersion"]) > 0
    assert "status" not in created or not created["status"]  # status is the status subresource's

    got = api.get(name="web", namespace="default").to_dict()
    assert got["metadata"]["resourceVersion"] == md["resourceVersion"]

    # label-only change: no generation bump; spec change: bump
    got["metadata"]["labels"]["extra"] = "1"
    upd = api.replace(body=got, namespace="default").to_dict()
    assert upd["metadata"]["generation"] == 1
    upd["spec"]["replicas"] = 5
    upd2 = api.replace(body=upd, namespace="default").to_dict()
    assert upd2["metadata"]["generation"] == 2
    assert int(upd2["metadata"]["resourceVersion"]) > int(upd["metadata"]["resourceVersion"])

    # a stale resourceVersion is a 409 Conflict
    with pytest.raises(ConflictError) as e:
        api.replace(body=upd, namespace="default")
    assert e.value.status == 409

    # PUT of an identical object is a no-op
    same = api.replace(body=upd2, namespace="default").to_dict()
    assert same["metadata"]["resourceVersion"] == upd2["metadata"]["resourceVersion"]

    # main-resource writes ignore .status
    upd2["status"] = {"replicas": 99}
    assert "replicas" not in (api.replace(body=upd2, namespace="default").to_dict().get("status") or {})

    with pytest.raises(ConflictError):
        api.create(body=deployment(), namespace="default")  # AlreadyExists
    api.delete(name="web", namespace="default", body={"propagationPolicy": "Foreground"})
    with pytest.raises(NotFoundError) as e:
        api.get(name="web", namespace="default")
    assert e.value.status == 404


def test_errors_are_kubernetes_status(dyn, member):
    cms = _cms(dyn)
    with pytest.raises(NotFoundError) as e:
        cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, namespace="nope")
    status = json.loads(e.value.body)
    assert status["kind"] == "Status" and status["reason"] == "NotFound" and status["code"] == 404
    assert status["message"] == 'namespaces "nope" not found'
    with pytest.raises(UnprocessibleEntityError):
        cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}},
                   namespace="default")
    code, status = raw(member.url, "POST", "/api/v1/namespaces/default/configmaps", b"\x00k8s",
                       "application/vnd.kubernetes.protobuf")
    assert code == 415 and status["reason"] == "UnsupportedMediaType"
    code, status = raw(member.url, "PATCH", "/api/v1/namespaces/default/configmaps/x", b"{}", "text/plain")
    assert code == 415
    with pytest.raises(ApiException) as e:
        dyn.request("GET", "/api/v1/namespaces/default/configmaps", query_params=[("labelSelector", "a b c")])
    assert e.value.status == 400


def test_list_selectors_and_list_shape(dyn):
    cms = _cms(dyn)
    for i, (app, tier) in enumerate([("web", "fe"), ("web", "be"), ("db", "be")]):
        cms.create(body={"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": f"c{i}", "labels": {"app": app, "tier": tier}}}, namespace="default")
    lst = cms.get(namespace="default").to_dict()
    assert lst["kind"] == "ConfigMapList" and lst["apiVersion"] == "v1" and lst["metadata"]["resourceVersion"]

    def names(**kw):
        return sorted(i["metadata"]["name"] for i in cms.get(namespace="default", **kw).to_dict()["items"])

    assert names(label_selector="app=web") == ["c0", "c1"]
    assert names(label_selector="app!=web") == ["c2"]
    assert names(label_selector="tier in (be),app notin (db)") == ["c1"]
    assert names(label_selector="!tier") == []
    assert names(field_selector="metadata.name=c2") == ["c2"]
    assert names(field_selector="metadata.namespace=default,metadata.name!=c0") == ["c1", "c2"]
    assert len(cms.get().to_dict()["items"]) == 3  # all namespaces


def test_patch_types(dyn):
    api = _deploys(dyn)
    api.create(body=deployment(), namespace="default")
    out = api.patch(name="web", namespace="default", body={"spec": {"replicas": 4}},
                    content_type="application/merge-patch+json").to_dict()
    assert out["spec"]["replicas"] == 4
    out = api.patch(name="web", namespace="default", body=[{"op": "replace", "path": "/spec/replicas", "value": 1}],
                    content_type="application/json-patch+json").to_dict()
    assert out["spec"]["replicas"] == 1
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"},
                                                           {"name": "app", "image": "nginx:2"}]}}}}
    out = api.patch(name="web", namespace="default", body=patch,
                    content_type="application/strategic-merge-patch+json").to_dict()
    cs = {c["name"]: c for c in out["spec"]["template"]["spec"]["containers"]}
    assert cs["app"]["image"] == "nginx:2" and cs["app"]["ports"] == [{"containerPort": 80, "protocol": "TCP"}] and "side" in cs
    rv = out["metadata"]["resourceVersion"]
    # a patch that changes nothing keeps the resourceVersion
    again = api.patch(name="web", namespace="default", body={"spec": {"replicas": 1}},
                      content_type="application/merge-patch+json").to_dict()
    assert again["metadata"]["resourceVersion"] == rv
    # dry run: answered but not stored
    dry = api.patch(name="web", namespace="default", body={"spec": {"replicas": 9}}, dry_run="All",
                    content_type="application/merge-patch+json").to_dict()
    assert dry["spec"]["replicas"] == 9
    assert api.get(name="web", namespace="default").to_dict()["spec"]["replicas"] == 1


def test_server_side_apply(dyn):
    api = _deploys(dyn)
    body = deployment()
    body["metadata"]["labels"]["owned-by-a"] = "yes"
    created = api.server_side_apply(body=body, namespace="default", field_manager="a").to_dict()
    mf = created["metadata"]["managedFields"]
    assert mf[0]["manager"] == "a" and mf[0]["operation"] == "Apply" and mf[0]["fieldsType"] == "FieldsV1"
    assert "f:spec" in mf[0]["fieldsV1"]
    rv = created["metadata"]["resourceVersion"]

    # identical apply: no write
    same = api.server_side_apply(body=copy.deepcopy(body), namespace="default", field_manager="a").to_dict()
    assert same["metadata"]["resourceVersion"] == rv

    other = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 7}}
    with pytest.raises(ConflictError) as e:
        api.server_side_apply(body=other, namespace="default", field_manager="b")
    status = json.loads(e.value.body)
    assert status["reason"] == "Conflict" and 'conflict with "a"' in status["message"]
    assert status["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "a"',
                                            "field": ".spec.replicas"}]
    forced = api.server_side_apply(body=other, namespace="default", field_manager="b", force_conflicts=True).to_dict()
    assert forced["spec"]["replicas"] == 7
    assert {m["manager"] for m in forced["metadata"]["managedFields"]} == {"a", "b"}

    # a stops applying its label: removed
    del body["metadata"]["labels"]["owned-by-a"]
    del body["spec"]["replicas"]
    out = api.server_side_apply(body=body, namespace="default", field_manager="a").to_dict()
    assert "owned-by-a" not in out["metadata"]["labels"] and out["spec"]["replicas"] == 7

    with pytest.raises(ApiException) as e:  # fieldManager is required
        dyn.request("PATCH", "/apis/apps/v1/namespaces/default/deployments/web", body=other,
                    content_type="application/apply-patch+yaml")
    assert e.value.status == 400


def test_status_and_scale_subresources(dyn):
    api = _deploys(dyn)
    api.create(body=deployment(replicas=3), namespace="default")
    status_api = dyn.resources.get(api_version="apps/v1", kind="Deployment").status
    obj = api.get(name="web", namespace="default").to_dict()
    obj["status"] = {"readyReplicas": 2, "replicas": 3}
    obj["spec"]["replicas"] = 100  # ignored by the status subresource
    out = status_api.replace(body=obj, namespace="default").to_dict()
    assert out["status"]["readyReplicas"] == 2 and out["spec"]["replicas"] == 3
    assert out["metadata"]["generation"] == 1
    out = status_api.patch(name="web", namespace="default", body={"status": {"readyReplicas": 3}},
                           content_type="application/merge-patch+json").to_dict()
    assert out["status"] == {"readyReplicas": 3, "replicas": 3}

    scale = dyn.request("GET", "/apis/apps/v1/namespaces/default/deployments/web/scale").to_dict()
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"]["replicas"] == 3 and scale["status"]["selector"] == "app=web"
    scale = dyn.request("PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale",
                        body={"spec": {"replicas": 5}}, content_type="application/merge-patch+json").to_dict()
    assert scale["spec"]["replicas"] == 5
    scale["spec"]["replicas"] = 6
    dyn.request("PUT", "/apis/apps/v1/namespaces/default/deployments/web/scale", body=scale)
    assert api.get(name="web", namespace="default").to_dict()["spec"]["replicas"] == 6
    with pytest.raises(NotFoundError):
        dyn.request("GET", "/api/v1/namespaces/default/configmaps/x/scale")


def test_namespace_cascade_and_dry_run_create(dyn):
    ns_api = dyn.resources.get(api_version="v1", kind="Namespace")
    ns_api.create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    cms = _cms(dyn)
    dry = cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}}, namespace="team",
                     dry_run="All").to_dict()
    assert dry["metadata"]["name"] == "d"
    assert cms.get(namespace="team").to_dict()["items"] == []
    cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, namespace="team")
    ns_api.delete(name="team")
    assert cms.get(namespace="team").to_dict()["items"] == []
    with pytest.raises(NotFoundError):
        cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, namespace="team")
    with pytest.raises(ApiException) as e:
        ns_api.delete(name="default")
    assert e.value.status == 403
    names = {n["metadata"]["name"] for n in ns_api.get().to_dict()["items"]}
    assert {"default", "kube-system", "kube-public"} <= names


def test_watch_events(dyn, member):
    cms = _cms(dyn)
    start_rv = cms.get(namespace="default").to_dict()["metadata"]["resourceVersion"]
    events = []

    def consume():
        for ev in dyn.watch(cms, namespace="default", resource_version=start_rv, timeout=3):
            events.append((ev["type"], ev["object"].metadata.name))
            if len(events) == 3:
                break

    t = threading.Thread(target=consume)
    t.start()
    time.sleep(0.3)
    cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"}}, namespace="default")
    cms.patch(name="w", namespace="default", body={"data": {"a": "1"}},
              content_type="application/merge-patch+json")
    cms.delete(name="w", namespace="default")
    t.join(10)
    assert events == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]
    # from an old resourceVersion the history is replayed; timeoutSeconds ends the stream
    t0 = time.monotonic()
    replay = [ev["type"] for ev in dyn.watch(cms, namespace="default", resource_version=start_rv, timeout=1)]
    assert replay == ["ADDED", "MODIFIED", "DELETED"] and time.monotonic() - t0 < 5


def test_crd_resources_appear_in_discovery(dyn, tmp_path, kubeconfig):
    from .conftest import make_dynamic
    crds = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    crds.create(body={
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster",
                 "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object"}}}]}})
    fresh = make_dynamic(kubeconfig, str(tmp_path / "d2.json"))
    gadgets = fresh.resources.get(api_version="example.com/v1", kind="Gadget")
    assert not gadgets.namespaced
    g = gadgets.create(body={"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1"},
                             "spec": {"x": 1}, "status": {"ignored": True}}).to_dict()
    assert "status" not in g
    assert gadgets.get().to_dict()["kind"] == "GadgetList"
    crds.delete(name="gadgets.example.com")
    with pytest.raises(NotFoundError):
        fresh.request("GET", "/apis/example.com/v1/gadgets")
