"""``rollout status`` runs passes until the template's aggregated status says every member rolled the new
revision out; ``rollout history``/``undo`` read the template's revisions from git; ``restart`` stamps the
Pod template."""
from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from conftest import write


def test_rollout_status_waits_for_every_member_copy(cli, fleet, state):
    code, out, err = cli("rollout", "status", "deploy/nginx", "--timeout", "30s")
    assert code == 0, err
    assert out.splitlines()[-1] == 'deployment "nginx" successfully rolled out'
    # a new image: the template's generation moves, the members must observe it and report it ready
    cli.ok("set", "image", "deploy/nginx", "nginx=nginx:1.27")
    assert cli.ok("rollout", "status", "deploy/nginx", "--watch=false") == \
        "Waiting for deployment spec update to be observed...\n"
    fleet["member2"].set_fake_controller(False)  # member2 never reports its copy ready
    code, out, err = cli("rollout", "status", "deploy/nginx", "--timeout", "1s")
    assert code == 4 and "timed out waiting for the condition" in err
    assert 'deployment "nginx" successfully rolled out' not in out
    fleet["member2"].set_fake_controller(True)
    code, out, err = cli("rollout", "status", "deployment", "nginx", "--timeout", "30s")
    assert code == 0 and out.splitlines()[-1] == 'deployment "nginx" successfully rolled out', err
    for srv in fleet.values():
        copy = srv.get_object("apps/v1", "Deployment", "default", "nginx")
        assert copy["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    # scale the template: wait runs passes until the members' copies report the new size, summed
    cli.ok("scale", "deploy/nginx", "--replicas=5")
    code, out, err = cli("wait", "deploy/nginx", "--for=jsonpath={.status.readyReplicas}=5", "--timeout", "30s")
    assert (code, out) == (0, "deployment.apps/nginx condition met\n"), err
    assert sorted(srv.get_object("apps/v1", "Deployment", "default", "nginx")["spec"]["replicas"]
                  for srv in fleet.values()) == [2, 3]  # the policy's weights 1:2
    code, _out, err = cli("rollout", "status", "cm/nginx")
    assert code == 2 and 'no rollout viewer has been implemented for "ConfigMap"' in err


def _git(state, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=state, check=True,
                   capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_rollout_history_and_undo_from_the_template_file_in_git(cli, state):
    path = write(state / "web.yaml", """\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          replicas: 2
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec:
              containers:
              - name: web
                image: web:1   # release
        """)
    code, _out, err = cli("rollout", "history", "deploy/web")
    assert code == 2 and "the state directory is not in a git repository" in err
    _git(state, "init", "-q")
    _git(state, "add", "web.yaml")
    _git(state, "commit", "-qm", "web 1")
    cli.ok("scale", "deploy/web", "--replicas=3")  # not a new revision: the Pod template is unchanged
    _git(state, "commit", "-qam", "more replicas")
    cli.ok("set", "image", "deploy/web", "web=web:2")
    _git(state, "commit", "-qam", "web 2")
    cli.ok("set", "image", "deploy/web", "web=web:3")  # uncommitted
    out = cli.ok("rollout", "history", "deploy/web")
    assert [line.split(None, 1) for line in out.splitlines()] == [
        ["deployment.apps/web"], ["REVISION", "CHANGE-CAUSE"], ["1", "web 1"], ["2", "web 2"], ["3", "(uncommitted)"]]
    out = cli.ok("rollout", "history", "deploy/web", "--revision", "2")
    assert out.startswith("deployment.apps/web with revision #2\nPod Template:\n") and "image: web:2" in out
    assert cli.ok("rollout", "undo", "deploy/web") == "deployment.apps/web rolled back\n"
    assert "image: web:2   # release" in path.read_text() and "replicas: 3" in path.read_text()
    assert cli.ok("rollout", "undo", "deploy/web", "--to-revision=2") == \
        "deployment.apps/web skipped rollback (current template already matches revision 2)\n"
    cli.ok("rollout", "undo", "deploy/web", "--to-revision=1")
    assert yaml.safe_load(path.read_text())["spec"]["template"]["spec"]["containers"][0]["image"] == "web:1"
    code, _out, err = cli("rollout", "undo", "deploy/web", "--to-revision=9")
    assert code == 2 and "unable to find specified revision 9 in history" in err
    cli.ok("--now", "2026-02-01T00:00:00Z", "rollout", "restart", "deploy/web")
    restarted = yaml.safe_load(path.read_text())["spec"]["template"]["metadata"]["annotations"]
    assert restarted == {"kubectl.kubernetes.io/restartedAt": "2026-02-01T00:00:00Z"}
