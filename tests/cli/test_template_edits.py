"""``scale`` and ``set image`` edit the template in its file as ``patch`` does (only the lines that must
change), with kubectl's messages; ``reconcile`` then carries the change into the bindings and Works."""
from __future__ import annotations

import difflib
import json

from conftest import write

DEPLOY = """\
# the shop's web tier (owned by team-web)
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}   # flow style kept
spec:
  replicas: 2  # keep even
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      initContainers:
      - name: init
        image: "busybox:1.36"
      containers:
      - name: nginx
        image: 'nginx:1.25'   # pinned
        ports: [{containerPort: 80}]
      - name: sidecar
        image: envoy:1.29
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data: {a: "1"}
"""


def _changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_scale_changes_only_the_replicas_line(cli, state):
    path = write(state / "web.yaml", DEPLOY)
    assert cli.ok("scale", "deploy/web", "--replicas=5") == "deployment.apps/web scaled\n"
    after = path.read_text()
    assert _changed_lines(DEPLOY, after) == ["-  replicas: 2  # keep even", "+  replicas: 5  # keep even"]
    assert cli.ok("scale", "deployment", "web", "--replicas", "5") == "deployment.apps/web scaled\n"  # as kubectl
    assert path.read_text() == after
    code, _out, err = cli("scale", "deploy/web", "--replicas=3", "--current-replicas=2")
    assert code == 2 and "error: Expected replicas to be 2, was 5" in err
    code, _out, err = cli("scale", "deploy/web")
    assert code == 2 and 'required flag(s) "replicas" not set' in err
    code, _out, err = cli("scale", "deploy/web", "--replicas=-1")
    assert code == 2 and "COUNT must be greater than or equal to 0" in err
    code, _out, err = cli("scale", "cm/web-config", "--replicas=1")
    assert code == 2 and 'configmaps "web-config" cannot be scaled' in err
    code, _out, err = cli("scale", "deploy/absent", "--replicas=1")
    assert code == 1 and 'deployments.apps "absent" not found' in err
    assert cli.ok("scale", "deploy/web", "--replicas=1", "--dry-run") == "deployment.apps/web scaled (dry run)\n"
    assert path.read_text() == after
    # the next run divides the new replicas: the binding asks for 5
    write(state / "pp.yaml", """\
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: web}
        spec:
          resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
          placement: {clusterAffinity: {clusterNames: [member1]}}
        """)
    cli.ok("reconcile", "--offline")
    rb = json.loads(cli.ok("get", "rb", "web-deployment", "-o", "json"))
    assert rb["spec"]["replicas"] == 5


def test_set_image_changes_only_the_image_lines(cli, state):
    path = write(state / "web.yaml", DEPLOY)
    assert cli.ok("set", "image", "deploy/web", "nginx=nginx:1.27") == "deployment.apps/web image updated\n"
    after = path.read_text()
    assert _changed_lines(DEPLOY, after) == ["-        image: 'nginx:1.25'   # pinned",
                                             "+        image: 'nginx:1.27'   # pinned"]
    assert cli.ok("set", "image", "deploy/web", "nginx=nginx:1.27") == ""  # nothing to change: kubectl is silent
    cli.ok("set", "image", "deployment", "web", "*=registry.local/all:1")
    images = [line.strip() for line in path.read_text().splitlines() if "image:" in line]
    assert images == ['image: "registry.local/all:1"', "image: 'registry.local/all:1'   # pinned",
                      "image: registry.local/all:1"]  # each in its own quoting
    code, _out, err = cli("set", "image", "deploy/web", "x=nginx:2")
    assert code == 2 and 'error: unable to find container named "x"' in err
    code, _out, err = cli("set", "image", "cm/web-config", "x=nginx:2")
    assert code == 2 and "ConfigMap/web-config the object is not a pod or does not have a pod template" in err
    code, _out, err = cli("set", "image", "deploy/web", "nginx")
    assert code == 2


def test_patch_and_apply_also_change_only_the_lines_that_must(cli, state, tmp_path):
    original = DEPLOY.replace("  name: web\n", "  name: web\n  namespace: default\n", 1)
    path = write(state / "web.yaml", original)
    cli.ok("patch", "deploy", "web", "-p", '{"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "envoy:1.30"}]}}}}')
    assert _changed_lines(original, path.read_text()) == ["-        image: envoy:1.29", "+        image: envoy:1.30"]
    applied = write(tmp_path / "web.yaml", original.split("---")[0].replace("replicas: 2  # keep even", "replicas: 4")
                    .replace("envoy:1.29", "envoy:1.30"))
    assert cli.ok("apply", "-f", str(applied)) == "deployment.apps/web configured\n"
    assert _changed_lines(original, path.read_text()) == ["-  replicas: 2  # keep even", "+  replicas: 4  # keep even",
                                                           "-        image: envoy:1.29", "+        image: envoy:1.30"]
    # a change of shape (a new key) is rewritten by the round trip: comments kept, the object as asked
    cli.ok("patch", "deploy", "web", "-p", '{"spec": {"paused": true}}')
    text = path.read_text()
    assert "# the shop's web tier (owned by team-web)" in text and "paused: true" in text and "# pinned" in text
