"""kubectl's remaining habits: merged ``KUBECONFIG`` lists for ``join --context``, ``get rb -o wide`` with
CLUSTERS, "did you mean" for a mistyped kind or apiVersion, ``label k-`` saying "not labeled"."""
from __future__ import annotations

import yaml

from conftest import cluster_yaml, write
from karmactl.emulator import MemberServer


def test_join_reads_the_file_of_a_merged_kubeconfig_list_that_defines_the_context(cli, state, tmp_path, monkeypatch):
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))
    with MemberServer(name="member3", nodes=1) as srv:
        other = srv.write_kubeconfig(str(tmp_path / "kc" / "other.yaml"), context="elsewhere")
        mine = srv.write_kubeconfig(str(tmp_path / "kc" / "member3.yaml"), context="member3")
        monkeypatch.setenv("KUBECONFIG", f"{other}:{tmp_path / 'kc' / 'absent.yaml'}:{mine}")
        assert cli.ok("join", "member3", "--context", "member3") == "cluster(member3) is joined successfully\n"
        cluster = yaml.safe_load(cli.ok("get", "cluster", "member3", "-o", "yaml"))
        assert cluster["metadata"]["annotations"]["karmactl.io/kubeconfig"] == mine
        assert cluster["metadata"]["annotations"]["karmactl.io/context"] == "member3"
        # a context whose user another file of the list defines: one file per Cluster, said how to make one
        cfg = yaml.safe_load(open(other))
        cfg["contexts"].append({"name": "split", "context": {"cluster": "member3", "user": "nobody"}})
        write(tmp_path / "kc" / "other.yaml", yaml.safe_dump(cfg))
        code, _out, err = cli("join", "member4", "--context", "split")
        assert code == 2 and 'context "split" names user "nobody", which this file does not define' in err
        assert "kubectl config view --flatten --minify --context split" in err


WEB = """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}, {apiVersion: v1, kind: ConfigMap, name: cfg}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web:1}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {a: "1"}
"""


def test_get_rb_wide_has_clusters_and_label_says_not_labeled(cli, state):
    write(state / "m1.yaml", cluster_yaml("member1"))
    write(state / "m2.yaml", cluster_yaml("member2"))
    write(state / "web.yaml", WEB)
    cli.ok("reconcile", "--offline")
    rows = [line.split() for line in cli.ok("get", "rb", "-o", "wide").splitlines()]
    assert rows[0] == ["NAME", "SCHEDULED", "FULLYAPPLIED", "AGE", "CLUSTERS"]
    assert {r[0]: r[-1] for r in rows[1:]} == {"cfg-configmap": "member1,member2", "web-deployment": "member1:1,member2:2"} \
        or {r[0]: r[-1] for r in rows[1:]} == {"cfg-configmap": "member1,member2", "web-deployment": "member1:2,member2:1"}
    assert cli.ok("get", "rb").splitlines()[0].split() == ["NAME", "SCHEDULED", "FULLYAPPLIED", "AGE"]
    # label k- on a key that is not there: kubectl's "not labeled"
    assert cli.ok("label", "deploy", "web", "absent-") == "deployment.apps/web not labeled\n"
    assert cli.ok("label", "deploy", "web", "app-") == "deployment.apps/web labeled\n"


def test_did_you_mean_for_a_mistyped_kind_or_api_version(cli, state, tmp_path):
    code, _out, err = cli("get", "deploymnets")
    assert code == 2 and 'the server doesn\'t have a resource type "deploymnets" (did you mean "deployments"?)' in err
    code, _out, err = cli("explain", "propagationpolcy.spec")
    assert code == 2 and '(did you mean "propagationpolicy"?)' in err
    code, _out, err = cli("get", "zzz")
    assert code == 2 and "did you mean" not in err
    bad = write(tmp_path / "bad.yaml", """\
        apiVersion: app/v1
        kind: Deployment
        metadata: {name: a}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolcy
        metadata: {name: b}
        """)
    code, _out, err = cli("apply", "-f", str(bad))
    assert code == 2
    assert 'unknown kind "Deployment" in apiVersion "app/v1"' in err and '(did you mean apiVersion "apps/v1"?)' in err
    assert '(did you mean kind "PropagationPolicy"?)' in err


def _tree(root) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and ".karmactl" not in p.parts}


def test_diff_f_shows_what_applying_a_file_would_change_bindings_and_works_included(cli, state, tmp_path):
    write(state / "m1.yaml", cluster_yaml("member1"))
    write(state / "m2.yaml", cluster_yaml("member2"))
    write(state / "web.yaml", WEB)
    cli.ok("reconcile", "--offline")
    before = _tree(state)
    change = write(tmp_path / "change.yaml", WEB.split("---")[1].replace("replicas: 3", "replicas: 6")
                   + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {b: '2'}\n")
    code, out, err = cli("diff", "-f", str(change))
    assert code == 1, err
    assert "--- a/apps/v1, Kind=Deployment default/web\n+++ b/apps/v1, Kind=Deployment default/web" in out
    assert "-  replicas: 3\n+  replicas: 6" in out
    assert "+++ b/v1, Kind=ConfigMap default/extra" in out
    # what the next run computes from it: the binding's replicas and the Works' manifests
    assert "+++ b/work.karmada.io/v1alpha2, Kind=ResourceBinding default/web-deployment" in out
    assert "Kind=Work karmada-es-member1/web-" in out and "Kind=Work karmada-es-member2/web-" in out
    names = cli("diff", "-f", str(change), "-o", "name")[1].splitlines()
    assert "apps.v1.Deployment.default.web" in names and "v1.ConfigMap.default.extra" in names
    assert _tree(state) == before  # planned on a copy: nothing of the state directory changed
    code, out, _err = cli("plan", "-f", str(state / "web.yaml"))
    assert (code, out) == (0, "")
    code, _out, err = cli("diff", "-f", str(change), "--online")
    assert code == 2 and "diff -f compares offline" in err


def test_explain_describes_karmada_fields(cli):
    out = cli.ok("explain", "pp.spec.placement.clusterTolerations.tolerationSeconds")
    lines = out.splitlines()
    assert lines[:5] == ["GROUP:      policy.karmada.io", "KIND:       PropagationPolicy", "VERSION:    v1alpha1", "",
                         "FIELD: tolerationSeconds <integer>"]
    assert "<empty>" not in out and "before it is evicted" in out
    assert "carries no field descriptions" not in cli.ok("explain", "cluster")
    # every field of the policies and of the kinds people write has a description
    from karmactl.api import validation_schema as vs
    from karmactl.api.field_docs import describe

    def missing(kind, schema, path):
        if isinstance(schema, vs.Arr):
            return missing(kind, schema.items, path)
        if not isinstance(schema, vs.Obj):
            return []
        return [".".join(path + (k,)) for k, v in schema.props.items() if not describe(kind, list(path + (k,)))] + \
            [m for k, v in schema.props.items() for m in missing(kind, v, path + (k,))]

    written = {k: spec for (_g, k), spec in vs.SPEC_SCHEMAS.items() if k != "MultiClusterIngress"}
    assert {k: missing(k, spec[0], ("spec",)) for k, spec in written.items()} == {k: [] for k in written}
    assert all(describe(k, []) for k in written)
    # a MultiClusterIngress' spec is an Ingress spec: Kubernetes' own descriptions
    assert "<empty>" not in cli.ok("explain", "mci.spec.rules.http")
