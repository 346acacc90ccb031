"""The interpreter chain per operation, through the CLI: a ResourceInterpreterCustomization the
user applies answers the operations it defines, the built-in third-party rules answer the rest."""
from __future__ import annotations

import json

import yaml

from tests.conftest import NOW, write

from .samples import SAMPLES
from .test_propagation import cluster, crd, policy

CLONESET = next(s for s in SAMPLES if s.kind == "CloneSet")
ALWAYS_HEALTHY = """
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: cloneset-health}
spec:
  target: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet}
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          return true
        end
"""


def test_a_customization_wins_for_its_operations_only(cli, state, tmp_path):
    docs = [cluster("member1"), cluster("member2"), crd(CLONESET), CLONESET.object(),
            policy("PropagationPolicy", "divided", [CLONESET], True)]
    (state / "fleet.yaml").write_text(yaml.safe_dump_all(docs))
    write(state / "customization.yaml", ALWAYS_HEALTHY)
    cli.ok("reconcile", "--offline", "--now", NOW)
    lagging = tmp_path / "lagging.yaml"
    lagging.write_text(yaml.safe_dump({"status": CLONESET.status["member2"]}))
    out = cli.ok("observe", f"{CLONESET.resource}/sample", "--cluster", "member2", "--status-file", str(lagging))
    assert "health Healthy" in out  # the customization's rule, not the built-in one (Unhealthy)
    rb = json.loads(cli.ok("get", "rb", "sample-cloneset", "-n", "default", "-o", "json"))
    assert rb["spec"]["replicas"] == 4  # replicas: no customized rule, the built-in one answers
    assert sorted(t["replicas"] for t in rb["spec"]["clusters"]) == [2, 2]

    (state / "customization.yaml").unlink()
    out = cli.ok("observe", f"{CLONESET.resource}/sample", "--cluster", "member2", "--status-file", str(lagging))
    assert "health Unhealthy" in out
