"""Each overrider kind on its own (semantics §1.3, §9.3)."""
import json

import pytest

from karmactl.overrides import OverriderError, apply_overriders


def deployment(containers=None, labels=None, annotations=None):
    md = {"name": "nginx", "namespace": "default"}
    if labels is not None:
        md["labels"] = labels
    if annotations is not None:
        md["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md,
            "spec": {"replicas": 2, "template": {"spec": {
                "containers": containers if containers is not None else [{"name": "nginx", "image": "nginx:1.19"}]}}}}


def containers(obj):
    if obj["kind"] == "Pod":
        return obj["spec"]["containers"]
    return obj["spec"]["template"]["spec"]["containers"]


# --- plaintext -------------------------------------------------------------------------------

PLAINTEXT_CASES = [
    ("replace-replicas", [{"path": "/spec/replicas", "operator": "replace", "value": 5}],
     lambda o: o["spec"]["replicas"] == 5),
    ("add-annotation-map", [{"path": "/metadata/annotations", "operator": "add", "value": {"OverridePolicy": "test"}}],
     lambda o: o["metadata"]["annotations"] == {"OverridePolicy": "test"}),
    ("remove-field", [{"path": "/spec/replicas", "operator": "remove"}], lambda o: "replicas" not in o["spec"]),
    ("append-container", [{"path": "/spec/template/spec/containers/-", "operator": "add",
                           "value": {"name": "side", "image": "busybox"}}],
     lambda o: [c["name"] for c in containers(o)] == ["nginx", "side"]),
    ("ops-in-order", [{"path": "/spec/replicas", "operator": "replace", "value": 1},
                      {"path": "/spec/replicas", "operator": "replace", "value": 9}],
     lambda o: o["spec"]["replicas"] == 9),
]


@pytest.mark.parametrize("ops,check", [c[1:] for c in PLAINTEXT_CASES], ids=[c[0] for c in PLAINTEXT_CASES])
def test_plaintext(ops, check):
    src = deployment()
    out = apply_overriders(src, {"plaintext": ops})
    assert check(out)
    assert src == deployment()  # input untouched


@pytest.mark.parametrize("op", [
    {"path": "/spec/missing", "operator": "replace", "value": 1},
    {"path": "/spec/missing", "operator": "remove"},
    {"path": "/spec/no/parent", "operator": "add", "value": 1},
    {"path": "/spec/template/spec/containers/7", "operator": "replace", "value": {}},
    {"path": "/spec/replicas", "operator": "upsert", "value": 1},
], ids=["replace-missing", "remove-missing", "add-missing-parent", "index-out-of-range", "unknown-op"])
def test_plaintext_errors(op):
    with pytest.raises(OverriderError, match="plaintext"):
        apply_overriders(deployment(), {"plaintext": [op]})


# --- image -----------------------------------------------------------------------------------

def test_image_all_containers_not_init():
    d = deployment([{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "reg.io/app:2"}])
    d["spec"]["template"]["spec"]["initContainers"] = [{"name": "i", "image": "busybox"}]
    out = apply_overriders(d, {"imageOverrider": [{"component": "Registry", "operator": "replace",
                                                   "value": "mirror.io"}]})
    assert [c["image"] for c in containers(out)] == ["mirror.io/nginx:1", "mirror.io/app:2"]
    assert out["spec"]["template"]["spec"]["initContainers"][0]["image"] == "busybox"


@pytest.mark.parametrize("api,kind,path", [
    ("v1", "Pod", ("spec",)),
    ("apps/v1", "ReplicaSet", ("spec", "template", "spec")),
    ("apps/v1", "DaemonSet", ("spec", "template", "spec")),
    ("apps/v1", "StatefulSet", ("spec", "template", "spec")),
    ("batch/v1", "Job", ("spec", "template", "spec")),
])
def test_image_kinds(api, kind, path):
    obj = {"apiVersion": api, "kind": kind, "metadata": {"name": "x"}, "spec": {}}
    cur = obj
    for key in path:
        cur = cur.setdefault(key, {})
    cur["containers"] = [{"name": "c", "image": "nginx"}]
    out = apply_overriders(obj, {"imageOverrider": [{"component": "Tag", "operator": "replace", "value": "v2"}]})
    assert containers(out)[0]["image"] == "nginx:v2"


def test_image_other_kind_without_predicate_no_op():
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}}}
    assert apply_overriders(cron, {"imageOverrider": [{"component": "Tag", "operator": "replace", "value": "v2"}]}) == cron


def test_image_with_predicate_any_kind():
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
                {"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]}}}}}}
    path = "/spec/jobTemplate/spec/template/spec/containers/1/image"
    out = apply_overriders(cron, {"imageOverrider": [{"predicate": {"path": path}, "component": "Registry",
                                                      "operator": "add", "value": "reg.io"}]})
    got = out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert [c["image"] for c in got] == ["x:1", "reg.io/y:1"]


@pytest.mark.parametrize("path", ["/spec/template/spec/containers/5/image", "/spec/replicas", "/spec/nope/image"],
                         ids=["index-out-of-range", "not-a-string", "missing"])
def test_image_predicate_errors(path):
    with pytest.raises(OverriderError, match=r"imageOverrider\[0\]"):
        apply_overriders(deployment(), {"imageOverrider": [{"predicate": {"path": path}, "component": "Tag",
                                                            "operator": "replace", "value": "v"}]})


def test_image_unparseable_is_error():
    with pytest.raises(OverriderError, match="failed to parse image"):
        apply_overriders(deployment([{"name": "c", "image": "UPPER:case"}]),
                         {"imageOverrider": [{"component": "Tag", "operator": "replace", "value": "v"}]})


# --- command / args --------------------------------------------------------------------------

COMMAND_CASES = [
    ("add-to-missing", None, "add", ["--v=2"], ["--v=2"]),
    ("remove-from-missing-creates-empty", None, "remove", ["x"], []),
    ("append", ["nginx", "-g"], "add", ["daemon off;"], ["nginx", "-g", "daemon off;"]),
    ("remove-all-occurrences", ["a", "b", "a", "c"], "remove", ["a", "c"], ["b"]),
    ("other-operator-keeps", ["a"], "replace", ["b"], ["a"]),
]


@pytest.mark.parametrize("field", ["command", "args"])
@pytest.mark.parametrize("current,operator,value,expected", [c[1:] for c in COMMAND_CASES],
                         ids=[c[0] for c in COMMAND_CASES])
def test_command_args(field, current, operator, value, expected):
    c = {"name": "nginx", "image": "nginx"}
    if current is not None:
        c[field] = current
    other = {"name": "other", "image": "x", field: ["untouched"]}
    key = "commandOverrider" if field == "command" else "argsOverrider"
    out = apply_overriders(deployment([c, other]), {key: [{"containerName": "nginx", "operator": operator,
                                                           "value": value}]})
    assert containers(out)[0][field] == expected
    assert containers(out)[1][field] == ["untouched"]


def test_command_unknown_container_no_op():
    d = deployment()
    assert apply_overriders(d, {"commandOverrider": [{"containerName": "nope", "operator": "add",
                                                      "value": ["x"]}]}) == d


def test_command_non_workload_no_op():
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {}}
    assert apply_overriders(svc, {"argsOverrider": [{"containerName": "c", "operator": "add", "value": ["x"]}]}) == svc


# --- labels / annotations --------------------------------------------------------------------

LABEL_CASES = [
    ("add-creates-map", None, "add", {"env": "dev"}, {"env": "dev"}),
    ("add-overwrites", {"env": "prod"}, "add", {"env": "dev"}, {"env": "dev"}),
    ("replace-existing", {"bar": "x", "o": "1"}, "replace", {"bar": "test"}, {"bar": "test", "o": "1"}),
    ("replace-missing-skipped", {"o": "1"}, "replace", {"bar": "test"}, {"o": "1"}),
    ("remove-existing", {"for": "for", "o": "1"}, "remove", {"for": "ignored-value"}, {"o": "1"}),
    ("remove-missing-skipped", {"o": "1"}, "remove", {"for": "for"}, {"o": "1"}),
    ("slash-in-key", {"app.kubernetes.io/name": "a"}, "replace", {"app.kubernetes.io/name": "b"},
     {"app.kubernetes.io/name": "b"}),
    ("add-slash-key", {}, "add", {"karmada.io/x": "y"}, {"karmada.io/x": "y"}),
]


@pytest.mark.parametrize("field", ["labels", "annotations"])
@pytest.mark.parametrize("current,operator,value,expected", [c[1:] for c in LABEL_CASES],
                         ids=[c[0] for c in LABEL_CASES])
def test_labels_annotations(field, current, operator, value, expected):
    d = deployment(**{field: current})
    key = "labelsOverrider" if field == "labels" else "annotationsOverrider"
    out = apply_overriders(d, {key: [{"operator": operator, "value": value}]})
    assert out["metadata"].get(field) == expected


def test_remove_on_missing_map_leaves_it_missing():
    out = apply_overriders(deployment(), {"labelsOverrider": [{"operator": "remove", "value": {"a": ""}}]})
    assert "labels" not in out["metadata"]


# --- field overrider -------------------------------------------------------------------------

def configmap(**data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default"}, "data": data}


def test_field_json():
    cm = configmap(**{"db.json": '{"host": "a", "port": 5432, "opts": {"ssl": false}}'})
    out = apply_overriders(cm, {"fieldOverrider": [{"fieldPath": "/data/db.json", "json": [
        {"subPath": "/host", "operator": "replace", "value": "b"},
        {"subPath": "/opts/ssl", "operator": "replace", "value": True},
        {"subPath": "/port", "operator": "remove"}]}]})
    assert out["data"]["db.json"] == '{"host":"b","opts":{"ssl":true}}'


def test_field_yaml():
    cm = configmap(**{"app.yaml": "server:\n  port: 80\n  name: web\nfeatures:\n- a\n"})
    out = apply_overriders(cm, {"fieldOverrider": [{"fieldPath": "/data/app.yaml", "yaml": [
        {"subPath": "/server/port", "operator": "replace", "value": 8080},
        {"subPath": "/features/-", "operator": "add", "value": "b"}]}]})
    assert out["data"]["app.yaml"] == "features:\n- a\n- b\nserver:\n  name: web\n  port: 8080\n"


def test_field_slash_in_key_escaped():
    cm = configmap(**{"a/b.json": '{"x": 1}'})
    out = apply_overriders(cm, {"fieldOverrider": [{"fieldPath": "/data/a~1b.json", "json": [
        {"subPath": "/x", "operator": "replace", "value": 2}]}]})
    assert json.loads(out["data"]["a/b.json"]) == {"x": 2}


def test_field_without_ops_empties_string():
    out = apply_overriders(configmap(x='{"a": 1}'), {"fieldOverrider": [{"fieldPath": "/data/x"}]})
    assert out["data"]["x"] == ""


@pytest.mark.parametrize("overrider,match", [
    ({"fieldPath": "/metadata", "json": [{"subPath": "/a", "operator": "add", "value": 1}]}, "is not string"),
    ({"fieldPath": "/data/missing", "json": [{"subPath": "/a", "operator": "add", "value": 1}]}, "path"),
    ({"fieldPath": "/data/x", "json": [{"subPath": "/a", "operator": "add", "value": 1}]}, "invalid JSON"),
    ({"fieldPath": "/data/y", "json": [{"subPath": "/nope", "operator": "replace", "value": 1}]}, "json patch"),
    ({"fieldPath": "/data/x", "yaml": [{"subPath": "/a", "operator": "add", "value": 1}]}, "yaml"),
], ids=["not-a-string", "missing-field", "bad-json", "patch-fails", "bad-yaml"])
def test_field_errors(overrider, match):
    cm = configmap(x="{not json: [", y='{"a": 1}')
    with pytest.raises(OverriderError, match=match):
        apply_overriders(cm, {"fieldOverrider": [overrider]})


# --- order inside one rule -------------------------------------------------------------------

def test_fixed_order_plaintext_last():
    # plaintext runs after labelsOverrider even though it is listed first.
    overriders = {
        "plaintext": [{"path": "/metadata/labels/env", "operator": "replace", "value": "from-plaintext"}],
        "labelsOverrider": [{"operator": "add", "value": {"env": "from-labels"}}],
    }
    assert apply_overriders(deployment(), overriders)["metadata"]["labels"] == {"env": "from-plaintext"}


def test_image_before_plaintext():
    overriders = {
        "plaintext": [{"path": "/spec/template/spec/containers/0/image", "operator": "replace", "value": "final:1"}],
        "imageOverrider": [{"component": "Registry", "operator": "replace", "value": "reg.io"}],
    }
    assert containers(apply_overriders(deployment(), overriders))[0]["image"] == "final:1"


def test_field_json_written_like_go():
    cm = configmap(x='{"b": 1, "a": "x"}')
    out = apply_overriders(cm, {"fieldOverrider": [{"fieldPath": "/data/x", "json": [
        {"subPath": "/c", "operator": "add", "value": "<é&>"}]}]})
    assert out["data"]["x"] == '{"a":"x","b":1,"c":"\\u003cé\\u0026\\u003e"}'
