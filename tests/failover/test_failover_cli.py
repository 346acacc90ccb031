"""``karmactl taint clusters`` / ``cordon`` / ``uncordon`` (karmadactl §11.2) and ``describe rb``."""
from __future__ import annotations

import pytest

from karmactl.cli.cmd.taint import parse_taint, parse_taint_args
from karmactl.cli.context import CLIError

from tests.conftest import write
from tests.failover.helpers import T0

CLUSTER_FILE = """
# member1: the edge cluster (this comment must survive)
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: member1   # trailing comment
spec:
  syncMode: Push
  apiEndpoint: https://member1.example:6443
  taints:
  - key: dedicated
    value: gpu
    effect: NoSchedule
"""


@pytest.fixture
def cluster_file(state):
    return write(state / "clusters" / "member1.yaml", CLUSTER_FILE)


def test_taint_add_keeps_comments_and_stamps_no_execute(cli, cluster_file):
    out = cli.ok("taint", "clusters", "member1", "maintenance=true:NoExecute", "foo:NoSchedule", "--now", T0)
    assert out == "cluster/member1 tainted\n"
    text = cluster_file.read_text()
    assert "# member1: the edge cluster (this comment must survive)" in text and "# trailing comment" in text
    import yaml
    taints = yaml.safe_load(text)["spec"]["taints"]
    assert taints == [{"key": "maintenance", "value": "true", "effect": "NoExecute", "timeAdded": T0},
                      {"key": "foo", "effect": "NoSchedule"},
                      {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


@pytest.mark.parametrize("args, code, message", [
    (["dedicated=cpu:NoSchedule"], 2, "cluster member1 already has dedicated taint(s) with same effect(s) and --overwrite is false"),
    (["nope:NoSchedule-"], 2, 'taint "nope:NoSchedule" not found'),
    (["a:NoSchedule", "a-"], 2, 'can not both modify and remove the following taint(s) in the same command: {"a":""}'),
    (["a:Bogus"], 2, "invalid taint effect: Bogus, unsupported taint effect"),
    (["a:PreferNoSchedule"], 2, 'Unsupported value: "PreferNoSchedule": supported values: "NoSchedule", "NoExecute"'),
    (["a"], 2, "at least one taint update is required"),
])
def test_taint_errors(cli, cluster_file, args, code, message):
    before = cluster_file.read_text()
    got, _out, err = cli("taint", "clusters", "member1", *args)
    assert got == code and message in err
    assert cluster_file.read_text() == before


def test_taint_overwrite_and_remove(cli, cluster_file):
    assert cli.ok("taint", "clusters", "member1", "dedicated=cpu:NoSchedule", "--overwrite") == "cluster/member1 modified\n"
    assert cli.ok("taint", "cluster", "member1", "dedicated-") == "cluster/member1 untainted\n"
    import yaml
    assert "taints" not in yaml.safe_load(cluster_file.read_text())["spec"]


def test_taint_resource_word_and_unknown_cluster(cli, cluster_file):
    code, _o, err = cli("taint", "nodes", "member1", "a:NoSchedule")
    assert code == 2 and 'invalid resource type nodes, only ["cluster" "clusters"] are supported' in err
    code, _o, err = cli("taint", "clusters", "member9", "a:NoSchedule")
    assert code == 1 and 'clusters.cluster.karmada.io "member9" not found' in err


def test_dry_run_writes_nothing(cli, cluster_file):
    before = cluster_file.read_text()
    assert cli.ok("taint", "clusters", "member1", "x:NoSchedule", "--dry-run") == "cluster/member1 tainted\n"
    assert cli.ok("cordon", "member1", "--dry-run") == "member1 cluster cordoned\n"
    assert cluster_file.read_text() == before


def test_cordon_uncordon(cli, cluster_file):
    assert cli.ok("cordon", "member1") == "member1 cluster cordoned\n"
    assert cli.ok("cordon", "member1") == "member1 cluster already cordoned\n"
    assert "key: cluster.karmada.io/unschedulable" in cluster_file.read_text()
    assert cli.ok("uncordon", "member1") == "member1 cluster uncordoned\n"
    assert cli.ok("uncordon", "member1") == "member1 cluster already uncordoned\n"
    assert "unschedulable" not in cluster_file.read_text()
    assert "# trailing comment" in cluster_file.read_text()


def test_user_taints_stay_apart_from_controller_taints(cli, cluster_file):
    """Controller taints live in the overlay: removing a key from the file never touches them."""
    cli.ok("reconcile", "--offline", "--now", T0)
    cli.ok("cluster", "condition", "set", "member1", "Ready=False", "--now", T0)
    cli.ok("reconcile", "--offline", "--now", T0)
    code, _o, err = cli("taint", "clusters", "member1", "cluster.karmada.io/not-ready-")
    assert code == 2 and 'taint "cluster.karmada.io/not-ready" not found' in err
    import json
    taints = json.loads(cli.ok("get", "cluster", "member1", "-o", "json"))["spec"]["taints"]
    assert [(t["key"], t["effect"]) for t in taints] == [
        ("dedicated", "NoSchedule"), ("cluster.karmada.io/not-ready", "NoSchedule"),
        ("cluster.karmada.io/not-ready", "NoExecute")]


@pytest.mark.parametrize("spec, expected", [
    ("k=v:NoSchedule", {"key": "k", "value": "v", "effect": "NoSchedule"}),
    ("example.com/k:NoExecute", {"key": "example.com/k", "effect": "NoExecute"}),
    ("k", {"key": "k"}),
])
def test_parse_taint(spec, expected):
    assert parse_taint(spec) == expected


@pytest.mark.parametrize("spec", ["k=v=w:NoSchedule", "a:b:c", "-bad:NoSchedule", "k=bad value:NoSchedule"])
def test_parse_taint_invalid(spec):
    with pytest.raises(CLIError, match="invalid taint spec"):
        parse_taint(spec)


def test_parse_args_resources_first():
    assert parse_taint_args(["clusters", "a", "b", "k:NoSchedule", "j-"]) == (
        ["clusters", "a", "b"], [{"key": "k", "effect": "NoSchedule"}], [{"key": "j"}])
    with pytest.raises(CLIError, match="all resources must be specified before taint changes: c"):
        parse_taint_args(["clusters", "a", "k:NoSchedule", "c"])
    with pytest.raises(CLIError, match="duplicated taints with the same key and effect"):
        parse_taint_args(["clusters", "a", "k:NoSchedule", "k=v:NoSchedule"])
