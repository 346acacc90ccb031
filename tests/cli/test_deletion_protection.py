"""``resourcetemplate.karmada.io/deletion-protected: Always`` (issue 27, item 6): ``delete`` refuses
with the denial of Karmada's ResourceDeletionProtection webhook, and a run keeps the propagation of
a protected template whose policy went away (as Karmada, whose bindings outlive their policy)."""
from __future__ import annotations

import yaml

from tests.conftest import NOW, cluster_yaml, write

DENIAL = ('admission webhook "resourcedeletionprotection.karmada.io" denied the request: This resource is '
          "protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected")


def _app(protected: str = "Always") -> str:
    return f"""
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
  labels: {{resourcetemplate.karmada.io/deletion-protected: {protected}}}
data: {{a: b}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: plain, namespace: default}}
data: {{a: b}}
"""


POLICY = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: cms, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
"""


def test_delete_refuses_a_protected_template_with_karmadas_message_and_deletes_the_rest(cli, state):
    write(state / "apps.yaml", _app())
    code, out, err = cli("delete", "configmap", "settings", "plain")
    assert code == 2
    assert DENIAL in err and 'configmap "settings"' in err
    assert 'configmap "plain" deleted' in out
    names = [d["metadata"]["name"] for d in yaml.safe_load_all((state / "apps.yaml").read_text()) if d]
    assert names == ["settings"]


def test_a_label_other_than_always_does_not_protect(cli, state):
    write(state / "apps.yaml", _app("Never"))
    assert 'configmap "settings" deleted' in cli.ok("delete", "configmap", "settings")


def test_a_run_keeps_the_propagation_of_a_protected_template_whose_policy_is_gone(cli, state):
    write(state / "clusters.yaml", cluster_yaml("member1"))
    write(state / "apps.yaml", _app())
    write(state / "policy.yaml", POLICY)
    cli.ok("reconcile", "--offline", "--now", NOW)
    bindings = state / "computed" / "resourcebindings" / "default"
    assert (bindings / "settings-configmap.json").exists() and (bindings / "plain-configmap.json").exists()
    (state / "policy.yaml").unlink()
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 0
    assert "resourcetemplate.karmada.io/deletion-protected: Always" in err and "ConfigMap default/settings" in err
    assert (bindings / "settings-configmap.json").exists()
    assert not (bindings / "plain-configmap.json").exists()


def test_a_run_refuses_to_remove_what_a_protected_template_removed_by_hand_propagated(cli, state):
    write(state / "clusters.yaml", cluster_yaml("member1"))
    write(state / "apps.yaml", _app())
    write(state / "policy.yaml", POLICY)
    cli.ok("reconcile", "--offline", "--now", NOW)
    works = sorted(p.name for p in (state / "computed" / "works" / "karmada-es-member1").glob("*.json"))
    write(state / "apps.yaml", _app().split("---")[1])  # the protected ConfigMap removed from its file
    code, _out, err = cli("reconcile", "--offline", "--now", NOW)
    assert code == 2
    assert "ConfigMap default/settings was removed from the state directory: " + DENIAL in err
    assert sorted(p.name for p in (state / "computed" / "works" / "karmada-es-member1").glob("*.json")) == works
    # put back without the label, reconciled, then removed: its propagation goes
    write(state / "apps.yaml", _app("Never"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    write(state / "apps.yaml", _app().split("---")[1])
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert not (state / "computed" / "resourcebindings" / "default" / "settings-configmap.json").exists()
