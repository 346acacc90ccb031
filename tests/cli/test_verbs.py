"""kubectl's everyday verbs on the state directory (issue 14, item 1): version, api-resources,
api-versions, label, annotate, delete -l/--all/--dry-run."""
from __future__ import annotations

import json

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
