"""Karmada's guestbook sample with its Lua customization, offline, through the CLI on real files:
replicas divided by the Lua replica rule, health and status from the Lua rules; failing scripts
warn by name and the run goes on."""
from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.conftest import NOW, cluster_yaml, write
from tests.core.test_offline_run import NGINX  # 3 replicas

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
GUESTBOOK_DATA = DATA / "webapp.my.domain" / "v1" / "Guestbook"



def cluster(name: str) -> str:
    """A Ready Cluster that serves Guestbooks and Deployments."""
    doc = yaml.safe_load(textwrap.dedent(cluster_yaml(name)))
    doc["status"]["apiEnablements"].append({"groupVersion": "webapp.my.domain/v1",
                                            "resources": [{"name": "guestbooks", "kind": "Guestbook"}]})
    return yaml.safe_dump(doc)


def setup_state(state: Path, customization: Path = GUESTBOOK_DATA / "customizations.yaml") -> None:
    for name in ("guestbooks-crd.yaml", "guestbook.yaml"):
        shutil.copy(ROOT / "manifests" / "guestbook" / name, state / name)
    shutil.copy(customization, state / "guestbook-customization.yaml")
    for name in ("member1", "member2"):
        (state / f"{name}.yaml").write_text(cluster(name))
    shutil.copy(DATA / "guestbook-policy.yaml", state / "policy.yaml")
    write(state / "nginx.yaml", NGINX)


def works(state: Path, name: str) -> dict:
    """cluster -> the manifest of the Work of ``name``."""
    out = {}
    for path in sorted((state / "computed" / "works").glob(f"karmada-es-*/{name}-*.json")):
        out[path.parent.name.removeprefix("karmada-es-")] = json.loads(path.read_text())["spec"]["workload"]["manifests"][0]
    return out


def test_guestbook_size_divided_health_and_status_from_lua(cli, state, tmp_path):
    setup_state(state)
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0 and "warning" not in err, err

    # the Lua replica rule: spec.size 2, static weights 1:1 -> 1 + 1 (natively the CR would have no
    # replicas and each cluster would get the whole size)
    rb = yaml.safe_load(cli.ok("get", "rb", "guestbook-sample-guestbook", "-o", "yaml"))
    assert rb["spec"]["replicas"] == 2
    assert {t["name"]: t["replicas"] for t in rb["spec"]["clusters"]} == {"member1": 1, "member2": 1}
    assert {c: m["spec"]["size"] for c, m in works(state, "guestbook-sample").items()} == {"member1": 1, "member2": 1}
    assert sorted(m["spec"]["replicas"] for m in works(state, "nginx").values()) == [1, 2]

    # member reports: health interpreted by the Lua health rule (active pod -> Healthy)
    write(tmp_path / "s1.yaml", "active: gb-0\nstandby: [gb-1]\n")
    write(tmp_path / "s2.yaml", "standby: [gb-2]\n")
    later = "2026-01-01T00:01:00Z"
    out1 = cli.ok("observe", "guestbook/guestbook-sample", "--cluster", "member1", "--status-file",
                  str(tmp_path / "s1.yaml"), "--now", later)
    out2 = cli.ok("observe", "guestbook/guestbook-sample", "--cluster", "member2", "--status-file",
                  str(tmp_path / "s2.yaml"), "--now", later)
    assert "health Healthy" in out1 and "health Unhealthy" in out2
    cli.ok("reconcile", "--offline", "--now", later)

    rb = yaml.safe_load(cli.ok("get", "rb", "guestbook-sample-guestbook", "-o", "yaml"))
    items = {i["clusterName"]: i for i in rb["status"]["aggregatedStatus"]}
    assert {c: i["health"] for c, i in items.items()} == {"member1": "Healthy", "member2": "Unhealthy"}
    assert items["member1"]["status"] == {"active": "gb-0", "standby": ["gb-1"]}  # the Lua reflection

    # the Lua aggregation fills the template's status
    gb = yaml.safe_load(cli.ok("get", "guestbook", "guestbook-sample", "-o", "yaml"))
    assert gb["status"] == {"active": "member1/gb-0", "standby": ["member1/gb-1", "member2/gb-2"]}


def _broken(tmp_path: Path, field: str, script: str) -> Path:
    doc = yaml.safe_load((GUESTBOOK_DATA / "customizations.yaml").read_text())
    doc["spec"]["customizations"][field] = {"luaScript": script}
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_endless_replica_script_warns_by_name_and_other_objects_are_served(cli, state, tmp_path):
    setup_state(state, _broken(tmp_path, "replicaResource", "function GetReplicas(obj)\n  while true do end\nend"))
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0, err
    assert "warning: Guestbook default/guestbook-sample: cannot interpret replicas: ResourceInterpreterCustomization " \
           "declarative-configuration-guestbook: replicaResource (GetReplicas)" in err
    assert "time limit" in err
    assert works(state, "guestbook-sample") == {}  # no binding: Karmada's detector retries
    assert sorted(m["spec"]["replicas"] for m in works(state, "nginx").values()) == [1, 2]


def test_os_execute_and_io_open_fail_their_object_only(cli, state, tmp_path):
    marker = tmp_path / "pwned"
    setup_state(state, _broken(tmp_path, "statusAggregation",
                               f"function AggregateStatus(desired, items)\n  io.open('{marker}', 'w')\n"
                               f"  os.execute('touch {marker}')\n  return desired\nend"))
    write(tmp_path / "s1.yaml", "active: gb-0\n")
    cli.ok("reconcile", "--offline", "--now", NOW)
    cli.ok("observe", "guestbook/guestbook-sample", "--cluster", "member1", "--status-file", str(tmp_path / "s1.yaml"))
    code, _out, err = cli("reconcile", "--offline", "--now", "2026-01-01T00:01:00Z")
    assert code == 0, err
    assert "ResourceInterpreterCustomization declarative-configuration-guestbook: statusAggregation " \
           "(AggregateStatus) of Guestbook default/guestbook-sample: luaScript:2: attempt to index global 'io'" in err
    assert not marker.exists()
    assert {c: m["spec"]["size"] for c, m in works(state, "guestbook-sample").items()} == {"member1": 1, "member2": 1}


def test_syntax_error_is_refused_at_apply(cli, tmp_path):
    path = _broken(tmp_path, "healthInterpretation", "function InterpretHealth(obj)\n  return obj.status ==\nend")
    code, _out, err = cli("apply", "-f", str(path))
    assert code == 2
    assert "broken.yaml" in err and "ResourceInterpreterCustomization declarative-configuration-guestbook" in err
    assert "spec.customizations.healthInterpretation.luaScript" in err and "luaScript:3:" in err


def test_two_customizations_of_one_operation_are_refused_as_karmadas_webhook_does(cli, state):
    setup_state(state)
    write(state / "more.yaml", """
    apiVersion: config.karmada.io/v1alpha1
    kind: ResourceInterpreterCustomization
    metadata:
      name: z-more-guestbook
    spec:
      target: {apiVersion: webapp.my.domain/v1, kind: Guestbook}
      customizations:
        dependencyInterpretation:
          luaScript: "function GetDependencies(obj) return {} end"
        healthInterpretation:
          luaScript: "function InterpretHealth(obj) return true end"
    """)
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 2
    assert "more.yaml:1: ResourceInterpreterCustomization z-more-guestbook: spec.customizations.healthInterpretation: " \
           "conflicting with InterpreterOperation(InterpretHealth) of existing ResourceInterpreterCustomization(" \
           "declarative-configuration-guestbook)" in err
    assert not (state / "computed").exists()


COMPONENTS = """\
function GetComponents(obj)
  return {{name = "leader", replicas = 1}, {name = "follower", replicas = obj.spec.size - 1,
           replicaRequirements = {resourceRequest = {cpu = "500m"}}}}
end
"""
GATE = """
apiVersion: v1
kind: ConfigMap
metadata: {name: karmactl-config, namespace: karmada-system}
data: {multiplePodTemplatesScheduling: "true"}
"""


def test_component_resource_gives_the_binding_components_behind_the_gate(cli, state, tmp_path):
    doc = yaml.safe_load((GUESTBOOK_DATA / "customizations.yaml").read_text())
    doc["spec"]["customizations"]["componentResource"] = {"luaScript": COMPONENTS}
    (tmp_path / "components.yaml").write_text(yaml.safe_dump(doc))
    setup_state(state, tmp_path / "components.yaml")
    cli.ok("reconcile", "--offline", "--now", NOW)
    rb = json.loads(cli.ok("get", "rb", "guestbook-sample-guestbook", "-o", "json"))
    assert rb["spec"]["replicas"] == 2 and "components" not in rb["spec"]  # gate off: GetReplicas

    write(state / "karmactl-config.yaml", GATE)
    cli.ok("reconcile", "--offline", "--now", NOW)
    rb = json.loads(cli.ok("get", "rb", "guestbook-sample-guestbook", "-o", "json"))
    assert rb["spec"]["components"] == [
        {"name": "leader", "replicas": 1},
        {"name": "follower", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "500m"}}}]
    assert "replicas" not in rb["spec"] and "replicaRequirements" not in rb["spec"]
    # a multi-component workload is not divided (the placement does not ask for exactly one cluster):
    # every candidate cluster gets it, and Karmada's binding controller revises it to the target's 0 replicas
    assert rb["spec"]["clusters"] == [{"name": "member1"}, {"name": "member2"}]
    assert {c: m["spec"]["size"] for c, m in works(state, "guestbook-sample").items()} == {"member1": 0, "member2": 0}
    code, out, _err = cli("interpret", "-f", str(tmp_path / "components.yaml"), "--operation", "InterpretComponent",
                          "--desired-file", str(ROOT / "manifests" / "guestbook" / "guestbook.yaml"))
    assert code == 0 and yaml.safe_load(out.split("# [1/1] components:\n", 1)[1])[1]["name"] == "follower"


def test_interpreter_webhooks_are_refused_even_with_their_crd(cli, state, tmp_path):
    """Even with Karmada's CRD for it in the state directory (from ../shared), karmactl calls no webhooks."""
    from tests.kube_apiserver import KARMADA_CRDS

    crd = KARMADA_CRDS / "config.karmada.io_resourceinterpreterwebhookconfigurations.yaml"
    if not crd.is_file():
        pytest.skip(f"no Karmada CRDs at {KARMADA_CRDS} (../shared)")
    shutil.copy(crd, state / "webhook-crd.yaml")
    write(tmp_path / "webhook.yaml", """
    apiVersion: config.karmada.io/v1alpha1
    kind: ResourceInterpreterWebhookConfiguration
    metadata: {name: examples}
    webhooks: []
    """)
    code, _out, err = cli("apply", "-f", str(tmp_path / "webhook.yaml"))
    assert code == 2
    assert "ResourceInterpreterWebhookConfiguration examples: kind: Unsupported value: resource interpreter " \
           "webhooks are not supported by karmactl" in err
