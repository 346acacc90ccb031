"""kubectl's everyday verbs on the state directory (issue 14, item 1): version, api-resources,
api-versions, label, annotate, delete -l/--all/--dry-run."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.test_get_parity import APP
from tests.conftest import write

COMMENTED = """\
# the web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web  # keep me
  namespace: shop
  labels:
    app: web
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx"}]}
"""

POLICY = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nginx}]
"""


@pytest.fixture
def app(state, cli):
    write(state / "app.yaml", APP)
    (state / "web.yaml").write_text(COMMENTED)
    return cli


def names(cli, *args) -> list[str]:
    return cli.ok("get", *args, "-o", "name").split()


def test_version(cli):
    from karmactl import __version__

    assert cli.ok("version") == f"Client Version: v{__version__}\n"
    assert cli.ok("--version") == f"Client Version: v{__version__}\n"
    assert json.loads(cli.ok("version", "-o", "json"))["clientVersion"]["gitVersion"] == f"v{__version__}"
    code, _out, err = cli("version", "-o", "wide")
    assert code == 2 and "yaml" in err


def test_api_resources(cli, state):
    rows = [line.split() for line in cli.ok("api-resources").splitlines()]
    assert rows[0] == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    assert ["deployments", "deploy", "apps/v1", "true", "Deployment"] in rows
    assert ["propagationpolicies", "pp", "policy.karmada.io/v1alpha1", "true", "PropagationPolicy"] in rows
    cluster_scoped = cli.ok("api-resources", "--namespaced=false", "-o", "name").split()
    assert "clusters.cluster.karmada.io" in cluster_scoped and "deployments.apps" not in cluster_scoped
    assert cli.ok("api-resources", "--api-group", "apps", "-o", "name").split() == [
        "daemonsets.apps", "deployments.apps", "replicasets.apps", "statefulsets.apps"]
    write(state / "crd.yaml", """
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: widgets.example.io}
    spec:
      group: example.io
      scope: Namespaced
      names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wg]}
      versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
    """)
    assert "widgets.example.io" in cli.ok("api-resources", "-o", "name").split()
    assert "example.io/v1" in cli.ok("api-versions").split()


def test_api_versions(cli):
    found = cli.ok("api-versions").split()
    assert found == sorted(found)
    assert {"v1", "apps/v1", "policy.karmada.io/v1alpha1", "work.karmada.io/v1alpha2"} <= set(found)


def test_label_in_place_keeps_comments(app, state):
    assert app.ok("label", "deploy", "web", "-n", "shop", "tier=frontend") == "deployment.apps/web labeled\n"
    text = (state / "web.yaml").read_text()
    assert "# the web tier" in text and "# keep me" in text and "tier: frontend" in text
    assert app.ok("get", "deploy", "web", "-n", "shop", "-o", "jsonpath={.metadata.labels.tier}") == "frontend"
    assert app.ok("label", "deploy/web", "-n", "shop", "tier=frontend") == "deployment.apps/web not labeled\n"


def test_label_needs_overwrite_to_change(app):
    code, _out, err = app("label", "deploy", "nginx", "app=other")
    assert code == 2 and "'app' already has a value (nginx), and --overwrite is false" in err
    app.ok("label", "deploy", "nginx", "app=other", "--overwrite")
    assert app.ok("get", "deploy", "nginx", "-o", "jsonpath={.metadata.labels.app}") == "other"


def test_label_remove_all_and_selector(app):
    app.ok("label", "deploy", "--all", "team=a")
    assert names(app, "deploy", "-l", "team=a") == ["deployment.apps/api", "deployment.apps/nginx"]
    app.ok("label", "deploy", "-l", "app=nginx", "team-")
    assert names(app, "deploy", "-l", "team=a") == ["deployment.apps/api"]


@pytest.mark.parametrize("args, message", [
    (["deploy", "nginx", "bad key=x"], "invalid label key"),
    (["deploy", "nginx", "a=-x-"], "invalid label value"),
    (["deploy", "nginx"], "at least one label update is required"),
    (["deploy", "nginx", "a=1", "a-"], "can not both modify and remove"),
    (["deploy", "a=1"], "no name was specified"),
    (["rb", "x", "a=1"], "computed by `karmactl reconcile`"),
])
def test_label_refuses_bad_input(app, args, message):
    code, _out, err = app("label", *args)
    assert code == 2 and message in err


def test_label_missing_object_exits_1(app):
    code, _out, err = app("label", "deploy", "nope", "a=b")
    assert code == 1 and 'deployments.apps "nope" not found' in err


def test_annotate(app, state):
    assert app.ok("annotate", "deploy", "web", "-n", "shop", "note=hello world") == "deployment.apps/web annotated\n"
    assert "# keep me" in (state / "web.yaml").read_text()
    out = app.ok("get", "deploy", "web", "-n", "shop", "-o", "jsonpath={.metadata.annotations.note}")
    assert out == "hello world"
    app.ok("annotate", "deploy", "web", "-n", "shop", "note-")
    assert app.ok("get", "deploy", "web", "-n", "shop", "-o", "jsonpath={.metadata.annotations}") == ""


def test_label_dry_run_writes_nothing(app, state):
    before = (state / "app.yaml").read_text()
    assert app.ok("label", "deploy", "nginx", "x=y", "--dry-run") == "deployment.apps/nginx labeled (dry run)\n"
    assert (state / "app.yaml").read_text() == before


def test_delete_by_selector(app):
    assert app.ok("delete", "deploy", "-l", "app=nginx") == 'deployment.apps "nginx" deleted\n'
    assert names(app, "deploy") == ["deployment.apps/api"]


def test_delete_all_in_namespace_only(app):
    out = app.ok("delete", "deploy", "--all")
    assert out == 'deployment.apps "api" deleted\ndeployment.apps "nginx" deleted\n'
    assert names(app, "deploy", "-A") == ["deployment.apps/web"]


def test_delete_dry_run_writes_nothing(app, state):
    before = {p.name: p.read_text() for p in state.glob("*.yaml")}
    out = app.ok("delete", "deploy", "--all", "-A", "--dry-run")
    assert out.splitlines() == ['deployment.apps "api" deleted (dry run)', 'deployment.apps "nginx" deleted (dry run)',
                                'deployment.apps "web" deleted (dry run)']
    assert {p.name: p.read_text() for p in state.glob("*.yaml")} == before


def test_delete_kind_slash_name_and_refusals(app):
    assert app.ok("delete", "deploy/api", "svc/nginx") == 'deployment.apps "api" deleted\nservice "nginx" deleted\n'
    code, _out, err = app("delete", "deploy")
    assert code == 2 and "no name was specified" in err
    code, _out, err = app("delete", "deploy", "nginx", "--all")
    assert code == 2 and "names cannot be provided" in err
    code, _out, err = app("delete", "deploy", "nope", "nginx")
    assert code == 1 and 'deployments.apps "nope" not found' in err
    assert names(app, "deploy") == []  # nginx went; nope was reported


def test_patch_strategic_merge_and_json(app, state):
    assert app.ok("patch", "deploy", "web", "-n", "shop", "-p", '{"spec":{"replicas":4}}') == "deployment.apps/web patched\n"
    assert "# keep me" in (state / "web.yaml").read_text()
    assert app.ok("get", "deploy/web", "-n", "shop", "-o", "jsonpath={.spec.replicas}") == "4"
    assert app.ok("patch", "deploy", "web", "-n", "shop", "-p", "spec: {replicas: 4}") == \
        "deployment.apps/web patched (no change)\n"
    # strategic merge: containers merge by name, the other container stays
    app.ok("patch", "deploy/nginx", "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox:2"}]}}}}')
    images = app.ok("get", "deploy", "nginx", "-o", "jsonpath={.spec.template.spec.containers[*].image}")
    assert images == "nginx:1.25 busybox:2"
    # merge patch replaces the list
    app.ok("patch", "deploy/nginx", "--type", "merge", "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"x","image":"x:1"}]}}}}')
    assert app.ok("get", "deploy", "nginx", "-o", "jsonpath={.spec.template.spec.containers[*].name}") == "x"
    out = app.ok("patch", "deploy", "api", "--type", "json", "-o", "jsonpath={.spec.replicas}",
                 "-p", '[{"op": "replace", "path": "/spec/replicas", "value": 9}]')
    assert out == "9"


@pytest.mark.parametrize("args, message", [
    (["-p", "{not json"], "unable to parse the patch"),
    (["--type", "json", "-p", '[{"op": "remove", "path": "/spec/nope"}]'], "cannot be applied"),
    (["-p", '{"metadata": {"name": "other"}}'], "cannot change apiVersion, kind, name or namespace"),
    (["--type", "xml", "-p", "{}"], "--type must be one of"),
    ([], "exactly one of --patch"),
])
def test_patch_refusals(app, state, args, message):
    before = (state / "app.yaml").read_text()
    code, _out, err = app("patch", "deploy", "nginx", *args)
    assert code == 2 and message in err
    assert (state / "app.yaml").read_text() == before


def test_patch_invalid_result_is_refused(app, state):
    code, _out, err = app("patch", "pp", "x", "-p", "{}")
    assert code == 1 and 'propagationpolicies.policy.karmada.io "x" not found' in err
    write(state / "pp.yaml", POLICY)
    code, _out, err = app("patch", "pp", "web", "--type", "merge", "-p", '{"spec": {"resourceSelectors": null}}')
    assert code == 2 and "resourceSelectors" in err


def test_create_generators(cli, state, tmp_path):
    assert cli.ok("create", "namespace", "shop") == "namespace/shop created\n"
    assert (state / "namespaces" / "shop.yaml").is_file()
    code, _out, err = cli("create", "namespace", "shop")
    assert code == 1 and 'namespaces "shop" already exists' in err
    (tmp_path / "app.properties").write_text("a=b\n")
    (tmp_path / "env").write_text("# comment\nMODE=fast\n")
    cli.ok("create", "configmap", "cfg", "-n", "shop", "--from-literal", "feature=on",
           "--from-file", str(tmp_path / "app.properties"), "--from-env-file", str(tmp_path / "env"))
    cm = json.loads(cli.ok("get", "cm", "cfg", "-n", "shop", "-o", "json"))
    assert cm["data"] == {"feature": "on", "app.properties": "a=b\n", "MODE": "fast"}
    cli.ok("create", "secret", "generic", "db", "--from-literal", "password=s3cret")
    assert cli.ok("get", "secret", "db", "-o", "jsonpath={.data.password}") == "czNjcmV0"
    assert cli.ok("create", "deployment", "web", "--image", "nginx:1.25", "-r", "2", "-o", "name") == "deployment.apps/web\n"
    assert cli.ok("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].name}") == "nginx"


def test_create_dry_run_prints_yaml_and_stores_nothing(cli, state):
    out = cli.ok("create", "configmap", "cfg", "--from-literal", "a=1", "--dry-run", "-o", "yaml")
    assert out.startswith("apiVersion: v1\nkind: ConfigMap\n") and "a: '1'" in out
    assert not (state / "configmaps").exists()
    code, _out, err = cli("create", "configmap", "cfg", "--from-literal", "novalue")
    assert code == 2 and "expected KEY=VALUE" in err
    code, _out, err = cli("create", "deployment", "web")
    assert code == 2 and "image" in err


def editor(tmp_path, monkeypatch, *steps: tuple[str, str]) -> Path:
    """$EDITOR: a real program that, on its n-th run, saves the file with steps[n] (old, new) replaced and
    keeps every text it was shown in views.txt."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import json, sys\n"
        f"steps = json.loads({json.dumps(json.dumps(steps))})\n"
        f"log = {str(tmp_path / 'views.txt')!r}\n"
        "text = open(sys.argv[1]).read()\n"
        "n = open(log).read().count('\\x00') if __import__('os').path.exists(log) else 0\n"
        "open(log, 'a').write(text + '\\x00')\n"
        "old, new = steps[min(n, len(steps) - 1)]\n"
        "open(sys.argv[1], 'w').write(text.replace(old, new))\n")
    monkeypatch.setenv("KUBE_EDITOR", f'"{sys.executable}" "{script}"')
    return tmp_path / "views.txt"


def test_edit_writes_back_in_place_keeping_comments(app, state, tmp_path, monkeypatch):
    views = editor(tmp_path, monkeypatch, ("replicas: 1", "replicas: 3  # scaled"))
    assert app.ok("edit", "deploy", "web", "-n", "shop") == "deployment.apps/web edited\n"
    text = (state / "web.yaml").read_text()
    assert "# keep me" in text and "replicas: 3  # scaled" in text
    assert "name: web  # keep me" in views.read_text()  # the object as stored, comments included
    assert app.ok("get", "deploy/web", "-n", "shop", "-o", "jsonpath={.spec.replicas}") == "3"


def test_edit_reopens_on_error_then_saves(app, state, tmp_path, monkeypatch):
    write(state / "pp.yaml", POLICY)
    views = editor(tmp_path, monkeypatch, ("resourceSelectors:", "resourceSelectorz:"),
                   ("resourceSelectorz: [{apiVersion: apps/v1, kind: Deployment, name: nginx}]",
                    "resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: api}]"))
    assert app.ok("edit", "pp", "web") == "propagationpolicy.policy.karmada.io/web edited\n"
    shown = views.read_text().split("\x00")
    assert "was not valid" not in shown[0]
    assert 'propagationpolicy.policy.karmada.io "web" was not valid' in shown[1] and "resourceSelectorz" in shown[1]
    out = app.ok("get", "pp", "web", "-o", "jsonpath={.spec.resourceSelectors[0].name}")
    assert out == "api"


def test_edit_error_then_unchanged_cancels(app, state, tmp_path, monkeypatch):
    before = (state / "app.yaml").read_text()
    editor(tmp_path, monkeypatch, ("name: nginx", "name: renamed"), ("no such text", ""))
    code, _out, err = app("edit", "deploy", "nginx")
    assert code == 1 and "Edit cancelled, no valid changes were saved." in err
    assert (state / "app.yaml").read_text() == before


def test_edit_unchanged_is_cancelled(app, state, tmp_path, monkeypatch):
    before = (state / "web.yaml").read_text()
    editor(tmp_path, monkeypatch, ("no such text", ""))
    assert app.ok("edit", "deploy/web", "-n", "shop") == "Edit cancelled, no changes made.\n"
    assert (state / "web.yaml").read_text() == before


def test_explain_builtin_field(cli):
    out = cli.ok("explain", "deploy.spec.replicas")
    assert out.startswith("GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nFIELD: replicas <integer>\n")
    assert "Number of desired pods" in out
    top = cli.ok("explain", "deployments.apps")
    assert "Deployment enables declarative updates" in top and "  spec\t<DeploymentSpec>" not in top
    assert "  spec\t<Object>" in top
    assert "  containers\t<[]Object> -required-" in cli.ok("explain", "pods.spec")


def test_explain_karmada_kind(cli):
    out = cli.ok("explain", "pp.spec")
    assert "KIND:       PropagationPolicy" in out and "  resourceSelectors\t<[]Object> -required-" in out
    enum = cli.ok("explain", "pp.spec.placement.replicaScheduling.replicaSchedulingType")
    assert '- `"Duplicated"`' in enum and '- `"Divided"`' in enum
    assert "  labels\t<map[string]string>" in cli.ok("explain", "cluster.metadata")


def test_explain_recursive_and_errors(cli):
    out = cli.ok("explain", "deploy.spec.template.spec.containers", "--recursive")
    assert "\n  image\t<string>\n" in out and "\n    containerPort\t<integer> -required-\n" in out
    code, _out, err = cli("explain", "deploy.spec.nope")
    assert code == 2 and 'field "nope" does not exist' in err
    code, _out, err = cli("explain", "nosuchkind")
    assert code == 2 and 'resource type "nosuchkind"' in err


def test_dry_run_takes_kubectls_values(cli, state):
    out = cli.ok("create", "namespace", "shop", "--dry-run=client", "-o", "yaml")
    assert out == "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n"
    assert cli.ok("create", "namespace", "shop", "--dry-run=server") == "namespace/shop created (dry run)\n"
    assert not (state / "namespaces").exists()
    assert cli.ok("create", "namespace", "shop", "--dry-run=none") == "namespace/shop created\n"
    assert (state / "namespaces" / "shop.yaml").is_file()
