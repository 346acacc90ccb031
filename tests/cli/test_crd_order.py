"""Editing commands with a CRD-backed object whose plural sorts before ``customresourcedefinitions``
(issue 26, item 5): every CRD of the state directory is registered before any object is checked,
so ``clonesets/`` read before ``customresourcedefinitions/`` is no "unknown kind"."""
from __future__ import annotations

import pytest

from tests.conftest import write

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clonesets.apps.kruise.io}
spec:
  group: apps.kruise.io
  scope: Namespaced
  names: {kind: CloneSet, plural: clonesets, singular: cloneset, listKind: CloneSetList}
  versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object,
    x-kubernetes-preserve-unknown-fields: true}}}]
"""

CLONESET = """
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: sample, namespace: default, labels: {app: sample}}
spec:
  replicas: 2
  selector: {matchLabels: {app: sample}}
  template:
    metadata: {labels: {app: sample}}
    spec: {containers: [{name: nginx, image: nginx}]}
"""

POLICY = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: sample, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: sample}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
"""


@pytest.fixture
def ordered(state, cli):
    """A state directory whose first file (``clonesets/``) holds an object of a kind the last
    (``customresourcedefinitions/``) defines."""
    write(state / "customresourcedefinitions" / "clonesets.apps.kruise.io.yaml", CRD)
    write(state / "clonesets" / "default" / "sample.yaml", CLONESET)
    write(state / "propagationpolicies" / "default" / "sample.yaml", POLICY)
    return cli


def test_files_are_read_in_an_order_that_shows_the_bug(ordered, state):
    files = sorted(str(p.relative_to(state)) for p in state.rglob("*.yaml"))
    assert files.index("clonesets/default/sample.yaml") < \
        files.index("customresourcedefinitions/clonesets.apps.kruise.io.yaml")




VERBS = [
    pytest.param(["label", "cloneset", "sample", "tier=web"], "cloneset.apps.kruise.io/sample labeled", id="label"),
    pytest.param(["annotate", "cloneset", "sample", "note=hi"], "cloneset.apps.kruise.io/sample annotated",
                 id="annotate"),
    pytest.param(["patch", "cloneset", "sample", "--type", "merge", "-p", '{"spec":{"replicas":3}}'],
                 "cloneset.apps.kruise.io/sample patched", id="patch"),
    pytest.param(["delete", "cloneset", "sample"], 'cloneset.apps.kruise.io "sample" deleted', id="delete"),
    pytest.param(["suspend", "pp", "sample"], "suspended", id="suspend"),
    pytest.param(["create", "configmap", "settings", "--from-literal", "a=b"], "configmap/settings created",
                 id="create"),
]


@pytest.mark.parametrize("args, printed", VERBS)
def test_editing_commands_know_the_crd_kind(ordered, args, printed):
    code, out, err = ordered(*args)
    assert code == 0, err
    assert printed in out


def test_apply_knows_the_crd_kind(ordered, state, tmp_path):
    changed = write(tmp_path / "sample.yaml", CLONESET.replace("replicas: 2", "replicas: 5"))
    code, out, err = ordered("apply", "-f", str(changed))
    assert code == 0, err
    assert "cloneset.apps.kruise.io/sample configured" in out
    assert "replicas: 5" in (state / "clonesets" / "default" / "sample.yaml").read_text()
