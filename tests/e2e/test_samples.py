"""Karmada's own samples, unmodified, propagate without breaking the run (nginx with its
OverridePolicy, the guestbook CRD and custom resource)."""
from __future__ import annotations

import yaml

from .conftest import MANIFESTS, SAMPLES, binding_ready, reconcile_until


def test_karmada_samples_unmodified(state, cli, members, member_layer, kubectl):
    m1, m2 = members.start("member1"), members.start("member2")
    for path in (SAMPLES / "nginx", MANIFESTS / "guestbook"):
        code, out, err = cli("apply", "-f", str(path))
        assert code == 0, err
    reconcile_until(cli, lambda: binding_ready(state, "default", "nginx-deployment")
                    and m1.get_object("webapp.my.domain/v1", "Guestbook", "default", "guestbook-sample") is not None,
                    timeout=30)

    # nginx: 2 replicas, static weights 1:1, overrides per cluster
    d1 = m1.get_object("apps/v1", "Deployment", "default", "nginx")
    d2 = m2.get_object("apps/v1", "Deployment", "default", "nginx")
    assert (d1["spec"]["replicas"], d2["spec"]["replicas"]) == (1, 1)
    assert d1["metadata"]["annotations"]["env"] == "skoala-stage"
    assert {"env": "skoala-dev", "env-stat": "skoala-stage"}.items() <= d2["metadata"]["labels"].items()
    assert "bar" not in d2["metadata"]["labels"]  # replace only replaces a key that exists
    assert d2["metadata"]["labels"]["karmada.io/managed"] == "true"

    # guestbook: the CRD (ClusterPropagationPolicy) and the CR (PropagationPolicy + OverridePolicy) on member1
    kc1 = members.kubeconfig("member1")
    assert kubectl(kc1, "get", "crd", "guestbooks.webapp.my.domain", "-o", "name").strip() == \
        "customresourcedefinition.apiextensions.k8s.io/guestbooks.webapp.my.domain"
    gb = yaml.safe_load(kubectl(kc1, "get", "guestbooks", "guestbook-sample", "-n", "default", "-o", "yaml"))
    assert gb["spec"]["size"] == 4 and gb["metadata"]["annotations"]["OverridePolicy"] == "test"
    assert _served(m1) and not _served(m2)  # the ClusterPropagationPolicy sends the CRD to member1 only

    # the run stays clean: no member errors, every binding fully applied
    code, out, err = cli("reconcile")
    assert code == 0 and "warning" not in err, err
    rbs = yaml.safe_load(cli.ok("get", "rb", "-A", "-o", "yaml"))["items"]
    crbs = yaml.safe_load(cli.ok("get", "crb", "-o", "yaml"))["items"]
    applied = {b["metadata"]["name"]: {c["type"]: c["status"] for c in b["status"]["conditions"]}.get("FullyApplied")
               for b in rbs + crbs}
    assert applied == {"nginx-deployment": "True", "guestbook-sample-guestbook": "True",
                       "guestbooks.webapp.my.domain-customresourcedefinition": "True"}


def _served(member) -> bool:
    """Whether the member serves Guestbooks (only member1 got the CRD)."""
    try:
        member.list_objects("webapp.my.domain/v1", "Guestbook")
        return True
    except Exception:  # noqa: BLE001 - ApiError 404 for an unknown kind
        return False
