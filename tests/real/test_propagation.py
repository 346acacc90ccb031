"""Karmada's samples propagated to real members, checked with the real kubectl."""
from __future__ import annotations

import pytest

from .conftest import MANIFESTS, SAMPLES, converge, get_json, replicas, sample, write_yaml


def test_nginx_static_weights_divide_replicas_1_and_2(cli, joined, ns, tmp_path):
    cli.ok("apply", "-f", str(sample(MANIFESTS / "nginx", ns, tmp_path / "in")))
    converge(cli)
    m1, m2 = joined["member1"], joined["member2"]

    table = m2.kubectl("get", "deploy", "-n", ns, "-o", "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas",
                       "--no-headers").stdout.split()
    assert table == ["nginx", "2"]
    assert replicas(m1, ns, "nginx") == 1
    # The sample's OverridePolicy: labels on member2's copy, annotations on member1's.
    copy1, copy2 = get_json(m1, "deploy", "nginx", "-n", ns), get_json(m2, "deploy", "nginx", "-n", ns)
    assert copy2["metadata"]["labels"]["env"] == "skoala-dev"
    assert copy1["metadata"]["annotations"]["env"] == "skoala-stage"
    assert "env" not in copy1["metadata"]["labels"] and "env" not in copy2["metadata"].get("annotations", {})
    for copy in (copy1, copy2):
        assert copy["metadata"]["labels"]["karmada.io/managed"] == "true"
    # karmactl shows the member copies as the members report them.
    rows = [line.split()[:3] for line in cli.ok("get", "deploy", "nginx", "-n", ns, "-s", "members").splitlines()[1:]]
    assert rows == [["nginx", "member1", "0/1"], ["nginx", "member2", "0/2"]]


def test_karmada_nginx_sample_unmodified_duplicates_weights_1_1(cli, joined, ns, tmp_path):
    cli.ok("apply", "-f", str(sample(SAMPLES / "nginx", ns, tmp_path / "in")))
    converge(cli)
    assert [replicas(m, ns, "nginx") for m in joined.values()] == [1, 1]


def test_duplicated_gives_every_member_all_replicas(cli, joined, ns, tmp_path):
    sample(MANIFESTS / "nginx" / "deployment.yaml", ns, tmp_path / "in")
    write_yaml(tmp_path / "in" / "pp.yaml", {
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "nginx-everywhere", "namespace": ns},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
                 "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]},
                               "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}}})
    cli.ok("apply", "-f", str(tmp_path / "in"))
    converge(cli)
    assert [replicas(m, ns, "nginx") for m in joined.values()] == [3, 3]


@pytest.fixture
def guestbook_crd_cleanup(real_members):
    yield
    for member in real_members.values():
        member.kubectl("delete", "crd", "guestbooks.webapp.my.domain", "--ignore-not-found", "--timeout=60s")


def test_guestbook_crd_and_custom_resource_reach_member1(cli, joined, ns, tmp_path, guestbook_crd_cleanup):
    cli.ok("apply", "-f", str(sample(MANIFESTS / "guestbook", ns, tmp_path / "in")))
    # One run ships the CRD; the next sees the new API on member1 and ships the Guestbook.
    converge(cli)
    m1, m2 = joined["member1"], joined["member2"]
    crd = get_json(m1, "crd", "guestbooks.webapp.my.domain")
    assert crd["metadata"]["labels"]["karmada.io/managed"] == "true"
    assert get_json(m2, "crd", "guestbooks.webapp.my.domain") is None
    gb = get_json(m1, "guestbooks.webapp.my.domain", "guestbook-sample", "-n", ns)
    assert gb["spec"] == {"size": 4, "configMapName": "test", "alias": "Name"}  # size 2 overridden to 4
    assert gb["metadata"]["annotations"]["OverridePolicy"] == "test"

    cli.ok("delete", "-f", str(tmp_path / "in"))
    converge(cli)
    assert get_json(m1, "guestbooks.webapp.my.domain", "guestbook-sample", "-n", ns) is None
    assert get_json(m1, "crd", "guestbooks.webapp.my.domain") is None
