"""Input hygiene of ``apply``: server-populated fields stripped, every error listed (issue 14, part 5)."""
from __future__ import annotations

from karmactl.store import yamlio
from tests.conftest import NOW, cluster_yaml, write
from tests.statedir.samples import BAD_POLICY, NGINX

SERVER_KEYS = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields")


def test_get_yaml_then_apply_leaves_the_source_clean(cli, state, tmp_path):
    write(tmp_path / "in" / "nginx.yaml", NGINX.replace(
        "  labels: {app: nginx}\n", "  labels: {app: nginx}\n  annotations: {work.karmada.io/conflict-resolution: overwrite}\n", 1))
    write(state / "clusters.yaml", cluster_yaml("member1"))
    cli.ok("apply", "-f", str(tmp_path / "in"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    exported = cli.ok("get", "deploy", "nginx", "-o", "yaml")
    assert "permanent-id" in exported and "uid:" in exported  # the run's results show
    if "\nstatus:" not in exported:  # offline runs observe no member status; an online one would show it
        exported += "status:\n  replicas: 3\n  readyReplicas: 3\n"
    (tmp_path / "x.yaml").write_text(exported)
    out = cli.ok("apply", "-f", str(tmp_path / "x.yaml"))
    assert "deployment.apps/nginx unchanged" in out
    exported_pp = cli.ok("get", "pp", "-o", "yaml")
    (tmp_path / "pp.yaml").write_text(exported_pp)
    cli.ok("apply", "-f", str(tmp_path / "pp.yaml"))
    stored = "".join(p.read_text() for p in sorted(state.rglob("*.yaml")) if p.name != "clusters.yaml")
    assert "kind: Deployment" in stored and "kind: PropagationPolicy" in stored
    for key in (*SERVER_KEYS, "status", "permanent-id", "propagationpolicy.karmada.io/name"):
        assert key not in stored, key
    # what people set stays
    assert "work.karmada.io/conflict-resolution: overwrite" in stored
    # and the next run still computes the same thing
    assert cli("plan")[0] == 0


def test_verbose_apply_names_what_it_did_not_store(cli, tmp_path):
    write(tmp_path / "d.yaml", """
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: c
      uid: 0b5c6a6e-0000-4000-8000-000000000000
      resourceVersion: "42"
      labels: {propagationpolicy.karmada.io/permanent-id: x, team: a}
    data: {a: b}
    status: {phase: x}
    """)
    code, _out, err = cli("apply", "-f", str(tmp_path / "d.yaml"), "-v")
    assert code == 0
    assert "not stored" in err and "metadata.uid" in err and "status" in err
    assert "metadata.labels.propagationpolicy.karmada.io/permanent-id" in err
    obj = yamlio.load_all(next(cli.state.rglob("c.yaml")).read_text())[0][0]
    assert obj["metadata"] == {"name": "c", "labels": {"team": "a"}}  # no namespace the input did not write
    assert "status" not in obj


def test_every_error_of_a_policy_is_listed(cli, tmp_path):
    write(tmp_path / "pp.yaml", BAD_POLICY)
    code, out, err = cli("apply", "-f", str(tmp_path / "pp.yaml"), "-v")
    assert code == 2 and out == ""
    lines = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert len(lines) >= 2, err
    assert "more)" not in err
    assert all("pp.yaml:1: PropagationPolicy default/bad:" in ln for ln in lines)
    assert any("spec.resourceSelectors" in ln for ln in lines)
    assert any("clusterAffinities" in ln for ln in lines)


def test_every_bad_file_of_a_directory_is_listed_and_nothing_stored(cli, state, tmp_path):
    write(tmp_path / "in" / "a-good.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\ndata: {a: b}\n")
    write(tmp_path / "in" / "b-broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n")
    write(tmp_path / "in" / "c-unknown.yaml", "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g}\n")
    write(tmp_path / "in" / "d-binding.yaml",
          "apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\nmetadata: {name: rb}\nspec: {}\n")
    code, out, err = cli("apply", "-f", str(tmp_path / "in"))
    assert code == 2 and out == ""
    assert "b-broken.yaml" in err and "invalid YAML" in err
    assert "c-unknown.yaml:1: Gizmo g: kind:" in err
    assert "d-binding.yaml:1: ResourceBinding rb: kind:" in err and "karmactl observe" in err
    assert sum(1 for ln in err.splitlines() if ln.startswith("error: ")) == 3
    assert not list(state.rglob("*.yaml"))


def test_a_state_file_with_several_errors_lists_them_all(cli, state):
    write(state / "pp.yaml", BAD_POLICY)
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 2
    assert sum(1 for ln in err.splitlines() if ln.startswith("error: pp.yaml:1: PropagationPolicy default/bad:")) >= 2


BAD_BUILTINS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: "three"
  replica: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: flags}
data:
  feature: on
  quoted: "on"
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec:
  ports: [{name: http, port: 80}]
  selector: {app: web}
"""


def test_builtin_kinds_are_validated_strictly_against_the_openapi_schema(cli, state, tmp_path):
    write(tmp_path / "bad.yaml", BAD_BUILTINS)
    code, out, err = cli("apply", "-f", str(tmp_path / "bad.yaml"))
    assert code == 2 and out == ""
    errors = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert errors == [
        'error: ' + str(tmp_path / "bad.yaml") + ':1: Deployment default/web: spec.replica: unknown field "spec.replica"',
        'error: ' + str(tmp_path / "bad.yaml") + ':1: Deployment default/web: spec.replicas: '
        'cannot unmarshal string into Go value of type int32',
        # YAML 1.1, as sigs.k8s.io/yaml reads it: an unquoted `on` is a boolean, which a ConfigMap refuses
        'error: ' + str(tmp_path / "bad.yaml") + ':13: ConfigMap default/flags: data.feature: '
        'cannot unmarshal bool into Go value of type string',
    ]
    assert not list(state.rglob("*.yaml"))
    # fixed, the same file applies
    write(tmp_path / "bad.yaml", BAD_BUILTINS.replace('replicas: "three"', "replicas: 3").replace("  replica: 2\n", "")
          .replace("feature: on", 'feature: "on"'))
    out = cli.ok("apply", "-f", str(tmp_path / "bad.yaml"))
    assert "deployment.apps/web created" in out and "configmap/flags created" in out and "service/svc created" in out


def test_reapplying_a_file_is_unchanged_under_kubernetes_scalar_rules(cli, state, tmp_path):
    # YAML 1.1 octal and booleans mean the same to every reader of the state directory
    text = ("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: Opaque\nimmutable: yes\n"
            "stringData: {mode: '0755'}\n")
    write(tmp_path / "s.yaml", text)
    assert "secret/s created" in cli.ok("apply", "-f", str(tmp_path / "s.yaml"))
    stored = next(state.rglob("s.yaml"))
    stored.write_text(stored.read_text().replace("immutable: true", "immutable: yes  # kept as written"))
    assert "secret/s unchanged" in cli.ok("apply", "-f", str(tmp_path / "s.yaml"))
    assert "immutable: yes  # kept as written" in stored.read_text()
