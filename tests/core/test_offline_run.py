"""`karmactl reconcile --offline`: the whole control plane on real files, as a new user runs it."""
from __future__ import annotations

import json
import subprocess

import pytest

from karmactl.api.names import work_name

from tests.conftest import NOW, cluster_yaml, write

NGINX = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  labels: {app: nginx}
spec:
  replicas: 3
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - image: nginx
        name: nginx
"""

PP_HEAD = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx-propagation
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: nginx
  placement:
"""

STATIC_PP = PP_HEAD + """\
    clusterAffinity:
      clusterNames: [member1, member2]
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
        - targetCluster: {clusterNames: [member1]}
          weight: 1
        - targetCluster: {clusterNames: [member2]}
          weight: 2
"""

DUPLICATED_PP = PP_HEAD + """\
    clusterAffinity:
      clusterNames: [member1, member2, member3]
    replicaScheduling:
      replicaSchedulingType: Duplicated
"""


@pytest.fixture
def inputs(tmp_path):
    d = tmp_path / "in"
    write(d / "clusters.yaml", "---".join(cluster_yaml(f"member{i}") for i in (1, 2, 3)))
    write(d / "nginx.yaml", NGINX)
    return d


def get_json(cli, *args):
    return json.loads(cli.ok("get", *args, "-o", "json"))


def work_replicas(cli, cluster):
    work = get_json(cli, "work", "nginx-687f7fb96f", "-n", f"karmada-es-{cluster}")
    return work["spec"]["workload"]["manifests"][0]["spec"]["replicas"]


def test_static_weights_give_rb_and_works(cli, inputs):
    write(inputs / "pp.yaml", STATIC_PP)
    out = cli.ok("apply", "-f", str(inputs))
    assert "deployment.apps/nginx created" in out
    cli.ok("reconcile", "--offline", "--now", NOW)
    rb = get_json(cli, "rb", "nginx-deployment", "-n", "default")
    assert {c["name"]: c["replicas"] for c in rb["spec"]["clusters"]} == {"member1": 1, "member2": 2}
    cond = {c["type"]: c for c in rb["status"]["conditions"]}["Scheduled"]
    assert (cond["status"], cond["reason"]) == ("True", "Success")
    assert work_replicas(cli, "member1") == 1
    assert work_replicas(cli, "member2") == 2
    code, _out, err = cli("get", "work", "nginx-687f7fb96f", "-n", "karmada-es-member3", "-o", "json")
    assert code == 1 and 'works.work.karmada.io "nginx-687f7fb96f" not found' in err
    names = cli.ok("get", "work", "-A", "-o", "name").split()
    assert names == ["work.work.karmada.io/nginx-687f7fb96f"] * 2


def test_work_links_binding_and_template(cli, inputs):
    write(inputs / "pp.yaml", STATIC_PP)
    cli.ok("apply", "-f", str(inputs))
    cli.ok("reconcile", "--offline", "--now", NOW)
    rb = get_json(cli, "rb", "nginx-deployment")
    work = get_json(cli, "work", "nginx-687f7fb96f", "-n", "karmada-es-member2")
    rb_id = rb["metadata"]["labels"]["resourcebinding.karmada.io/permanent-id"]
    assert work["metadata"]["labels"]["resourcebinding.karmada.io/permanent-id"] == rb_id
    assert work["metadata"]["annotations"]["resourcebinding.karmada.io/name"] == "nginx-deployment"
    manifest = work["spec"]["workload"]["manifests"][0]
    assert manifest["metadata"]["labels"]["karmada.io/managed"] == "true"
    assert manifest["metadata"]["annotations"]["work.karmada.io/name"] == "nginx-687f7fb96f"
    assert "status" not in manifest and "uid" not in manifest["metadata"]
    template = get_json(cli, "deploy", "nginx")
    assert template["metadata"]["annotations"]["propagationpolicy.karmada.io/name"] == "nginx-propagation"
    assert rb["spec"]["resource"]["uid"] == template["metadata"]["uid"]


def test_duplicated_over_three_clusters(cli, inputs):
    write(inputs / "pp.yaml", DUPLICATED_PP)
    cli.ok("apply", "-f", str(inputs))
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert [work_replicas(cli, f"member{i}") for i in (1, 2, 3)] == [3, 3, 3]


def test_second_run_writes_nothing(cli, inputs, state):
    write(inputs / "pp.yaml", STATIC_PP)
    cli.ok("apply", "-f", str(inputs))
    cli.ok("reconcile", "--offline", "--now", NOW)
    git = lambda *a: subprocess.run(["git", *a], cwd=state, check=True, capture_output=True, text=True).stdout
    git("init", "-q")
    git("add", "-A")
    assert not any(".karmactl" in line for line in git("status", "--porcelain").splitlines())
    git("-c", "user.email=t@example", "-c", "user.name=t", "commit", "-qm", "first run")
    _code, _out, err = cli("reconcile", "--offline", "--now", "2026-01-01T01:00:00Z")
    assert "0 file(s) changed" in err
    assert git("status", "--porcelain") == ""


def test_scaling_the_template_rewrites_works(cli, inputs, state):
    write(inputs / "pp.yaml", STATIC_PP)
    cli.ok("apply", "-f", str(inputs))
    cli.ok("reconcile", "--offline", "--now", NOW)
    write(inputs / "nginx.yaml", NGINX.replace("replicas: 3", "replicas: 6"))
    assert "configured" in cli.ok("apply", "-f", str(inputs / "nginx.yaml"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert (work_replicas(cli, "member1"), work_replicas(cli, "member2")) == (2, 4)


def test_deleting_the_template_removes_binding_and_works(cli, inputs):
    write(inputs / "pp.yaml", STATIC_PP)
    cli.ok("apply", "-f", str(inputs))
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert 'deployment.apps "nginx" deleted' in cli.ok("delete", "deploy", "nginx")
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert cli("get", "rb", "nginx-deployment")[0] == 1
    assert cli.ok("get", "work", "-A", "-o", "name") == ""


def test_dry_run_writes_nothing(cli, inputs, state):
    write(inputs / "pp.yaml", STATIC_PP)
    cli.ok("apply", "-f", str(inputs))
    # apply recorded only each object's creation time
    before = {p: p.read_bytes() for p in (state / "computed").rglob("*") if p.is_file()}
    assert before and all("computed/status/" in str(p) for p in before)
    out = cli.ok("reconcile", "--offline", "--dry-run", "--now", NOW)
    assert "computed/works/karmada-es-member1/nginx-687f7fb96f.json" in out
    assert {p: p.read_bytes() for p in (state / "computed").rglob("*") if p.is_file()} == before


def test_plan_exit_codes(cli, inputs):
    write(inputs / "pp.yaml", STATIC_PP)
    cli.ok("apply", "-f", str(inputs))
    assert cli("plan", "--now", NOW)[0] == 1
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert cli("plan", "--now", NOW)[0] == 0


def test_unmatched_policy_leaves_template_unbound(cli, inputs):
    write(inputs / "pp.yaml", STATIC_PP.replace("name: nginx\n", "name: other\n"))
    cli.ok("apply", "-f", str(inputs))
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert cli.ok("get", "rb", "-A", "-o", "name") == ""


def test_get_tables_use_karmada_columns(cli, inputs):
    write(inputs / "pp.yaml", STATIC_PP)
    cli.ok("apply", "-f", str(inputs))
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert cli.ok("get", "rb", "--now", "2026-01-01T00:32:00Z").splitlines()[0].split() == [
        "NAME", "SCHEDULED", "FULLYAPPLIED", "AGE"]
    work_table = cli.ok("get", "work", "-A", "--now", "2026-01-01T00:32:00Z")
    assert work_table.splitlines()[0].split() == ["NAMESPACE", "NAME", "WORKLOAD-KIND", "APPLIED", "AGE"]
    assert "karmada-es-member1   nginx-687f7fb96f   Deployment" in work_table and "32m" in work_table
    assert cli.ok("get", "pp").splitlines()[0].split() == ["NAME", "CONFLICT-RESOLUTION", "PRIORITY", "AGE"]
    clusters = cli.ok("get", "clusters", "-o", "wide")
    assert clusters.splitlines()[0].split()[:5] == ["NAME", "VERSION", "MODE", "READY", "AGE"]
    assert cli.ok("get", "deploy", "nginx", "-o", "jsonpath={.spec.replicas}") == "3"


def test_cluster_scoped_template_gets_crb(cli, inputs):
    write(inputs / "cr.yaml", """
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata:
      name: reader
    rules: []
    ---
    apiVersion: policy.karmada.io/v1alpha1
    kind: ClusterPropagationPolicy
    metadata:
      name: reader
    spec:
      resourceSelectors:
      - apiVersion: rbac.authorization.k8s.io/v1
        kind: ClusterRole
        name: reader
      placement:
        clusterAffinity:
          clusterNames: [member1]
    """)
    cli.ok("apply", "-f", str(inputs))
    cli.ok("reconcile", "--offline", "--now", NOW)
    crb = get_json(cli, "crb", "reader-clusterrole")
    assert [c["name"] for c in crb["spec"]["clusters"]] == ["member1"]
    work = json.loads(cli.ok("get", "work", "-n", "karmada-es-member1", "-o", "json"))["items"][0]
    assert work["metadata"]["name"] == work_name("", "reader", "ClusterRole")
    assert work["metadata"]["annotations"]["clusterresourcebinding.karmada.io/name"] == "reader-clusterrole"
