"""Retain: merging the desired manifest with the member object (semantics §9.5 step 4, §10.4)."""
import pytest

from karmactl.interpreter import InterpreterError, has_retain_hook, retain

ML = "resourcetemplate.karmada.io/managed-labels"
MA = "resourcetemplate.karmada.io/managed-annotations"


def obj(api, kind, spec=None, labels=None, annotations=None, **top):
    md = {"name": "x", "namespace": "ns"}
    if labels is not None:
        md["labels"] = labels
    if annotations is not None:
        md["annotations"] = annotations
    out = {"apiVersion": api, "kind": kind, "metadata": md}
    if spec is not None:
        out["spec"] = spec
    out.update(top)
    return out


# --- generic merge ---------------------------------------------------------------------------

def test_member_bookkeeping_fields_taken():
    desired = obj("v1", "ConfigMap", data={"a": "1"})
    desired["metadata"]["finalizers"] = ["desired/f"]
    observed = obj("v1", "ConfigMap", data={"a": "0"})
    observed["metadata"].update(resourceVersion="42", finalizers=["member/f"],
                                ownerReferences=[{"kind": "X", "name": "o"}])
    out = retain(desired, observed)
    assert out["metadata"]["resourceVersion"] == "42"
    assert out["metadata"]["finalizers"] == ["member/f"]
    assert out["metadata"]["ownerReferences"] == [{"kind": "X", "name": "o"}]
    assert out["data"] == {"a": "1"}
    assert desired["metadata"]["finalizers"] == ["desired/f"]  # input untouched


def test_member_without_finalizers_clears_desired_ones():
    desired = obj("v1", "ConfigMap")
    desired["metadata"]["finalizers"] = ["f"]
    assert "finalizers" not in retain(desired, obj("v1", "ConfigMap"))["metadata"]


LABEL_CASES = [
    ("member-only-label-kept", {"app": "a"}, {"app": "a", "member": "m"}, "app", {"app": "a", "member": "m"}),
    ("desired-wins-on-conflict", {"app": "new"}, {"app": "old"}, "app", {"app": "new"}),
    ("previously-managed-and-removed-dropped", {"app": "a"}, {"app": "a", "gone": "g"}, "app,gone", {"app": "a"}),
    ("managed-but-still-desired-kept", {"app": "a", "keep": "k"}, {"app": "a", "keep": "x"}, "app,keep",
     {"app": "a", "keep": "k"}),
    ("no-desired-labels", None, {"member": "m"}, "", {"member": "m"}),
]


@pytest.mark.parametrize("desired_labels,observed_labels,managed,expected", [c[1:] for c in LABEL_CASES],
                         ids=[c[0] for c in LABEL_CASES])
def test_label_merge(desired_labels, observed_labels, managed, expected):
    desired = obj("v1", "ConfigMap", labels=desired_labels)
    observed = obj("v1", "ConfigMap", labels=observed_labels, annotations={ML: managed})
    assert retain(desired, observed)["metadata"]["labels"] == expected


def test_annotation_merge():
    desired = obj("v1", "ConfigMap", annotations={"a": "1", MA: "a,old," + MA})
    observed = obj("v1", "ConfigMap", annotations={"a": "0", "old": "x", "member": "m", MA: "a,old," + MA})
    assert retain(desired, observed)["metadata"]["annotations"] == {"a": "1", MA: "a,old," + MA, "member": "m"}


# --- kind hooks ------------------------------------------------------------------------------

def deploy(replicas, labels=None):
    return obj("apps/v1", "Deployment", {"replicas": replicas}, labels=labels)


def test_deployment_retain_replicas_label():
    desired = deploy(3, {"resourcetemplate.karmada.io/retain-replicas": "true"})
    assert retain(desired, deploy(7))["spec"]["replicas"] == 7
    assert retain(deploy(3), deploy(7))["spec"]["replicas"] == 3
    off = deploy(3, {"resourcetemplate.karmada.io/retain-replicas": "false"})
    assert retain(off, deploy(7))["spec"]["replicas"] == 3


def test_deployment_retain_replicas_member_missing_raises():
    desired = deploy(3, {"resourcetemplate.karmada.io/retain-replicas": "true"})
    with pytest.raises(InterpreterError, match="spec.replicas"):
        retain(desired, obj("apps/v1", "Deployment", {}))


def test_pod_scheduling_fields_kept():
    desired = obj("v1", "Pod", {"containers": [{"name": "c", "image": "new", "volumeMounts": [{"name": "d"}]},
                                               {"name": "side", "image": "s"}],
                                "initContainers": [{"name": "i", "image": "i"}],
                                "volumes": [{"name": "d"}]})
    observed = obj("v1", "Pod", {"nodeName": "node-1", "serviceAccountName": "default",
                                 "containers": [{"name": "c", "image": "old",
                                                 "volumeMounts": [{"name": "d"}, {"name": "token"}]},
                                                {"name": "side", "image": "s"}],
                                 "initContainers": [{"name": "i", "volumeMounts": [{"name": "token"}]}],
                                 "volumes": [{"name": "d"}, {"name": "token"}]})
    spec = retain(desired, observed)["spec"]
    assert spec["nodeName"] == "node-1"
    assert spec["serviceAccountName"] == "default"
    assert spec["volumes"] == [{"name": "d"}, {"name": "token"}]
    assert spec["containers"][0] == {"name": "c", "image": "new", "volumeMounts": [{"name": "d"}, {"name": "token"}]}
    assert spec["containers"][1] == {"name": "side", "image": "s"}
    assert spec["initContainers"][0]["volumeMounts"] == [{"name": "token"}]


SERVICE_CASES = [
    ("clusterip-kept", {"clusterIP": "10.0.0.9"}, {}, {"clusterIP": "10.0.0.9"}),
    ("empty-clusterip-ignored", {"clusterIP": ""}, {"clusterIP": "None"}, {"clusterIP": "None"}),
    ("health-check-port-kept", {"healthCheckNodePort": 30001}, {}, {"healthCheckNodePort": 30001}),
    ("zero-health-check-port-ignored", {"healthCheckNodePort": 0}, {}, {}),
]


@pytest.mark.parametrize("member_spec,desired_spec,expected", [c[1:] for c in SERVICE_CASES],
                         ids=[c[0] for c in SERVICE_CASES])
def test_service(member_spec, desired_spec, expected):
    out = retain(obj("v1", "Service", dict(desired_spec)), obj("v1", "Service", member_spec))
    assert out["spec"] == expected


def test_service_account_secrets_merged():
    desired = obj("v1", "ServiceAccount", secrets=[{"name": "a"}], imagePullSecrets=[{"name": "reg"}])
    observed = obj("v1", "ServiceAccount", secrets=[{"name": "x-token-1"}, {"name": "a"}])
    out = retain(desired, observed)
    assert out["secrets"] == [{"name": "a"}, {"name": "x-token-1"}]
    assert out["imagePullSecrets"] == [{"name": "reg"}]
    assert "secrets" not in retain(obj("v1", "ServiceAccount"), obj("v1", "ServiceAccount"))


@pytest.mark.parametrize("kind,member_spec,path,expected", [
    ("PersistentVolumeClaim", {"volumeName": "pv-1"}, "volumeName", "pv-1"),
    ("PersistentVolume", {"claimRef": {"name": "c"}}, "claimRef", {"name": "c"}),
], ids=["pvc-volume-name", "pv-claim-ref"])
def test_volume_fields(kind, member_spec, path, expected):
    assert retain(obj("v1", kind, {}), obj("v1", kind, member_spec))["spec"][path] == expected


def test_job_selector_labels_kept():
    generated = {"batch.kubernetes.io/controller-uid": "u1"}
    desired = obj("batch/v1", "Job", {"template": {"metadata": {"labels": {"app": "a"}}}})
    observed = obj("batch/v1", "Job", {"selector": {"matchLabels": generated},
                                       "template": {"metadata": {"labels": {"app": "a", **generated}}}})
    spec = retain(desired, observed)["spec"]
    assert spec["selector"]["matchLabels"] == generated
    assert spec["template"]["metadata"]["labels"] == {"app": "a", **generated}


@pytest.mark.parametrize("secret_type,expected", [
    ("kubernetes.io/service-account-token", {"token": "member"}), ("Opaque", {"token": "desired"}),
])
def test_secret_token_data(secret_type, expected):
    desired = obj("v1", "Secret", type=secret_type, data={"token": "desired"})
    observed = obj("v1", "Secret", type=secret_type, data={"token": "member"})
    assert retain(desired, observed)["data"] == expected


def test_hook_table():
    assert has_retain_hook("apps/v1", "Deployment")
    assert not has_retain_hook("apps/v1", "StatefulSet")
    assert not has_retain_hook("v1", "ConfigMap")
