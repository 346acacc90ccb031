"""``wait --for=condition=…|delete|jsonpath=…`` on objects of the state directory, kubectl's messages."""
from __future__ import annotations

from conftest import cluster_yaml, write

PP = """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {tier: front}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web:1}]}
"""


def test_wait_for_conditions_jsonpath_and_delete_offline(cli, state):
    write(state / "member1.yaml", cluster_yaml("member1"))
    write(state / "web.yaml", PP)
    off = ("--reconcile=false", "--timeout", "0s")  # one look: met at once, or timed out
    code, _out, err = cli("wait", "rb/web-deployment", "--for=condition=Scheduled", *off)
    assert code == 1 and 'resourcebindings.work.karmada.io "web-deployment" not found' in err
    cli.ok("reconcile", "--offline")
    assert cli.ok("wait", "rb/web-deployment", "--for=condition=Scheduled", *off) == \
        "resourcebinding.work.karmada.io/web-deployment condition met\n"
    code, _out, err = cli("wait", "rb/web-deployment", "--for=condition=scheduled=False", *off)
    assert code == 4 and "timed out waiting for the condition on resourcebindings/web-deployment" in err
    assert cli.ok("wait", "deploy", "-l", "tier=front", "--for=jsonpath={.spec.replicas}=3", *off) == \
        "deployment.apps/web condition met\n"
    assert cli.ok("wait", "cluster/member1", "--for=jsonpath={.status.conditions[0].type}", *off) == \
        "cluster.cluster.karmada.io/member1 condition met\n"
    code, _out, err = cli("wait", "deploy/web", "--for=jsonpath={.spec.replicas}=4", *off)
    assert code == 4
    code, _out, err = cli("wait", "deploy/web", "--for=ready", *off)
    assert code == 2 and 'unrecognized condition: "ready"' in err
    code, _out, err = cli("wait", "deploy", "-l", "tier=back", "--for=delete", *off)
    assert code == 1 and "no matching resources found" in err
    # delete: the binding goes with the next run
    (state / "web.yaml").write_text(PP.split("---")[0])
    code, _out, err = cli("wait", "rb/web-deployment", "--for=delete", *off)
    assert code == 4
    cli.ok("reconcile", "--offline")
    assert cli.ok("wait", "rb/web-deployment", "--for=delete", *off) == \
        "resourcebinding.work.karmada.io/web-deployment condition met\n"
