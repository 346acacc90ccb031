"""A state directory inside a real repository: files that are not objects, .karmactlignore, and a
mistyped --state (issue 14, part 4)."""
from __future__ import annotations

import pytest

from karmactl.cli.main import main_exit_code
from tests.conftest import NOW, cluster_yaml, write
from tests.statedir.samples import DEPLOYMENT, POLICY

def _repository(state):
    """A state directory as people keep one in git: manifests beside a Helm chart, a kustomization,
    editor settings and a vendored directory of broken YAML."""
    write(state / "apps" / "nginx.yaml", DEPLOYMENT)
    write(state / "apps" / "policy.yaml", POLICY)
    write(state / "clusters" / "member1.yaml", cluster_yaml("member1"))
    write(state / "chart" / "Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n")
    write(state / "chart" / "values.yaml", "replicas: 3\n")
    write(state / "chart" / "templates" / "deploy.yaml", "replicas: {{ .Values.replicas }}\nkind: {{ x }\n")
    write(state / "apps" / "kustomization.yaml",
          "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [nginx.yaml]\n")
    write(state / "plain" / "kustomization.yml", "resources:\n- ../apps/nginx.yaml\n")
    write(state / "config.json", '{"editor.tabSize": 2}\n')
    write(state / "list.yaml", "- just\n- a list\n")
    write(state / "vendor" / "broken.yaml", "items: [\n")
    write(state / "scratch.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: scratch}\nspec: {replicas: bad}\n")
    write(state / ".karmactlignore", "# gitignore syntax\nvendor/\n/scratch.yaml\n")


def test_repository_with_chart_kustomization_and_config_works(cli, state):
    _repository(state)
    out = cli.ok("get", "deploy")
    assert "nginx" in out and "scratch" not in out
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert "nginx" in cli.ok("get", "rb")
    # nothing the loader ignored is touched
    assert (state / "config.json").read_text() == '{"editor.tabSize": 2}\n'


def test_verbose_notes_name_every_ignored_path(cli, state):
    _repository(state)
    code, _out, err = cli("get", "deploy", "-v")
    assert code == 0
    notes = [line for line in err.splitlines() if line.startswith("note: ignoring")]
    assert any("chart/" in n and "Helm chart" in n for n in notes)
    assert any("config.json:1" in n and "not a Kubernetes object" in n for n in notes)
    assert any("apps/kustomization.yaml" in n and "kustomize.config.k8s.io" in n for n in notes)
    assert any("plain/kustomization.yml" in n for n in notes)
    assert any("list.yaml:1" in n and "sequence" in n for n in notes)
    assert any("vendor/" in n and ".karmactlignore" in n for n in notes)
    assert any("scratch.yaml" in n and ".karmactlignore" in n for n in notes)
    # a second run reads the parse cache and still notes what it left out
    code, _out, err2 = cli("get", "deploy", "-v")
    assert [ln for ln in err2.splitlines() if ln.startswith("note:")] == [ln for ln in err.splitlines() if ln.startswith("note:")]
    # without -v: silent
    code, _out, err = cli("get", "deploy")
    assert code == 0 and "note:" not in err


@pytest.mark.parametrize("text, field", [
    pytest.param("kind: Deployment\nmetadata: {name: x}\n", "apiVersion", id="kind without apiVersion"),
    pytest.param("apiVersion: apps/v1\nmetadata: {name: x}\n", "kind", id="metadata without kind"),
], )
def test_an_object_missing_a_field_is_still_an_error(cli, state, text, field):
    write(state / "bad.yaml", text)
    code, _out, err = cli("get", "deploy")
    assert code == 2
    assert "bad.yaml:1" in err and field in err and "required field is missing" in err


def test_ignore_file_negation_brings_a_file_back(cli, state):
    write(state / "apps" / "nginx.yaml", DEPLOYMENT)
    write(state / "apps" / "other.yaml", DEPLOYMENT.replace("name: nginx\n", "name: other\n", 1))
    write(state / ".karmactlignore", "apps/*.yaml\n!apps/other.yaml\n")
    out = cli.ok("get", "deploy")
    assert "other" in out and "nginx" not in out


@pytest.mark.parametrize("args", [
    pytest.param(["plan"], id="plan"), pytest.param(["get", "deploy"], id="get"),
    pytest.param(["reconcile", "--offline"], id="reconcile"), pytest.param(["describe", "rb", "x"], id="describe"),
    pytest.param(["delete", "deploy", "nginx"], id="delete"),
])
def test_missing_state_directory_is_an_error(tmp_path, capsys, args):
    missing = tmp_path / "nope"
    code = main_exit_code(["--state", str(missing), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert f'state directory "{missing}" does not exist' in err
    assert not missing.exists()


def test_apply_creates_a_missing_state_directory_and_says_so(tmp_path, capsys):
    missing = tmp_path / "new"
    write(tmp_path / "nginx.yaml", DEPLOYMENT)
    code = main_exit_code(["--state", str(missing), "apply", "-f", str(tmp_path / "nginx.yaml")])
    captured = capsys.readouterr()
    assert code == 0
    assert f'creating state directory "{missing}"' in captured.err
    assert "deployment.apps/nginx created" in captured.out and missing.is_dir()


def test_help_and_completion_need_no_state_directory(tmp_path, capsys):
    missing = tmp_path / "nope"
    assert main_exit_code(["--state", str(missing), "get", "--help"]) == 0
    assert main_exit_code(["--state", str(missing), "completion", "bash"]) == 0
    assert not missing.exists()


def test_state_that_is_a_file_is_an_error(tmp_path, capsys):
    write(tmp_path / "f", "x")
    assert main_exit_code(["--state", str(tmp_path / "f"), "get", "deploy"]) == 2
    assert "is not a directory" in capsys.readouterr().err


@pytest.mark.parametrize("large", [False, True], ids=["in process", "parse workers"])
def test_every_bad_file_of_the_state_directory_is_reported(cli, state, monkeypatch, large):
    from karmactl.store import parsing

    if large:
        monkeypatch.setattr(parsing, "PARALLEL_PARSE_MIN_FILES", 1)
    write(state / "a.yaml", DEPLOYMENT)
    write(state / "b-broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n")
    write(state / "c-typo.yaml", DEPLOYMENT.replace("  replicas: 3\n", "  replica: 3\n").replace("name: nginx\n", "name: web\n", 1))
    write(state / "d-unknown.yaml", "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g}\n")
    code, _out, err = cli("get", "deploy")
    assert code == 2
    errors = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 3, err
    assert errors[0].startswith("error: b-broken.yaml:") and "invalid YAML" in errors[0]
    assert errors[1] == 'error: c-typo.yaml:1: Deployment default/web: spec.replica: unknown field "spec.replica"'
    assert errors[2].startswith("error: d-unknown.yaml:1: Gizmo g: kind:")
