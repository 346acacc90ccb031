"""docs/gitops.md end to end: a throwaway git repository with the nginx sample and two local
member clusters; the CI script plans a merge request, reconciles the main branch and commits the
status back (issue 14, part 8)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from karmactl.emulator import MemberServer

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "docs" / "gitops" / "karmactl-ci.sh"
GIT_ENV = {"GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@localhost", "GIT_COMMITTER_NAME": "dev",
           "GIT_COMMITTER_EMAIL": "dev@localhost", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _env(**extra) -> dict:
    env = dict(os.environ, **GIT_ENV, KARMACTL=f"{sys.executable} -m karmactl", KARMACTL_TIMEOUT="60s")
    for ci in ("GITHUB_ACTIONS", "GITLAB_CI"):  # the CI script's formats are chosen by each test
        env.pop(ci, None)
    env.update(extra)
    env.pop("KARMACTL_STATE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _run(args, cwd, check=True, **extra) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=cwd, env=_env(**extra), capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def _git(cwd, *args) -> str:
    return _run(["git", *args], cwd).stdout


@pytest.fixture
def two_members(tmp_path):
    servers = [MemberServer(name=f"member{i}", port=0, data_dir=str(tmp_path / "members" / f"member{i}"),
                            fake_controller=True, fake_delay=0.05, nodes=3).start() for i in (1, 2)]
    yield servers
    for srv in servers:
        srv.close()


def _ci_checkout(origin: Path, where: Path, branch: str, servers) -> Path:
    """What a CI job has: a clone, and the members' kubeconfigs from its secrets in the ignored
    runtime directory."""
    _git(origin.parent, "clone", "-q", "-b", branch, str(origin), str(where))
    for srv in servers:
        srv.write_kubeconfig(str(where / "state" / ".karmactl" / "kubeconfigs" / srv.name), context=srv.name)
    return where


def dev_repository(tmp_path: Path, servers, files: dict | None = None) -> tuple[Path, Path]:
    """A bare ``origin`` and a developer's clone ``dev`` on branch main holding the nginx sample,
    the repository's .gitignore, ``files`` (state-relative path -> text) and the members joined
    (their kubeconfigs in the ignored runtime directory); nothing committed yet."""
    origin = tmp_path / "origin.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    dev = tmp_path / "dev"
    _git(tmp_path, "clone", "-q", str(origin), str(dev))
    _git(dev, "checkout", "-q", "-b", "main")
    shutil.copytree(ROOT / "manifests" / "nginx", dev / "state" / "nginx")
    shutil.copy(ROOT / ".gitignore", dev / ".gitignore")
    for rel, text in (files or {}).items():
        (dev / "state" / rel).write_text(text)
    # join writes each Cluster with a kubeconfig path relative to the state directory
    for srv in servers:
        kubeconfig = srv.write_kubeconfig(str(dev / "state" / ".karmactl" / "kubeconfigs" / srv.name), context=srv.name)
        _run([sys.executable, "-m", "karmactl", "--state", "state", "join", srv.name, "--kubeconfig", kubeconfig], dev)
    return origin, dev


def test_gitops_pipeline_plans_merges_reconciles_and_commits_status(tmp_path, two_members):
    origin, dev = dev_repository(tmp_path, two_members)
    assert "karmactl.io/kubeconfig: .karmactl/kubeconfigs/member1" in (dev / "state" / "clusters" / "member1.yaml").read_text()
    _git(dev, "add", "-A")
    assert ".karmactl" not in _git(dev, "status", "--porcelain")  # credentials never enter git
    _git(dev, "commit", "-q", "-m", "nginx sample on member1 and member2")
    _git(dev, "push", "-q", "origin", "main")

    # main: the first pipeline propagates and commits the status back
    ci = _ci_checkout(origin, tmp_path / "ci1", "main", two_members)
    out = _run([str(SCRIPT), "apply"], ci).stdout
    assert "karmactl-ci: committed" in out
    _git(dev, "pull", "-q", "origin", "main")
    assert "[skip ci]" in _git(dev, "log", "-1", "--format=%s")
    assert (dev / "state" / "computed" / "resourcebindings" / "default" / "nginx-deployment.json").is_file()
    assert _git(dev, "status", "--porcelain") == ""

    # a merge request: 3 -> 6 replicas; plan shows the new division (1:2 static weights) and fails nothing
    _git(dev, "checkout", "-q", "-b", "scale")
    deploy = dev / "state" / "nginx" / "deployment.yaml"
    deploy.write_text(deploy.read_text().replace("replicas: 3", "replicas: 6"))
    _git(dev, "commit", "-q", "-am", "scale nginx to 6")
    _git(dev, "push", "-q", "origin", "scale")
    mr = _ci_checkout(origin, tmp_path / "mr", "scale", two_members)
    comment = tmp_path / "karmactl-plan.md"
    plan = _run([str(SCRIPT), "plan"], mr, KARMACTL_PLAN_MARKDOWN=str(comment))
    summary = plan.stdout.split("\n\n", 1)[0].splitlines()
    assert len(summary) <= 10 and "replicas 3 → 6; member1 1 → 2, member2 2 → 4" in summary[1]
    assert "ResourceBinding default/nginx-deployment" in plan.stdout
    assert "+    replicas: 4" in plan.stdout and "+    replicas: 2" in plan.stdout
    assert comment.read_text().startswith("### karmactl plan: 0 to create, 3 to update, 0 to delete")
    assert _git(mr, "status", "--porcelain") == ""  # planning writes nothing tracked

    # an invalid merge request fails its plan job, with an annotation on the line in GitHub Actions
    broken = _ci_checkout(origin, tmp_path / "broken", "scale", two_members)
    (broken / "state" / "nginx" / "deployment.yaml").write_text(deploy.read_text().replace("replicas: 6", 'replicas: "six"'))
    bad = _run([str(SCRIPT), "plan"], broken, check=False, GITHUB_ACTIONS="true", KARMACTL_PLAN_MARKDOWN=str(comment))
    assert bad.returncode == 2 and "spec.replicas" in bad.stderr
    assert "::error file=state/nginx/deployment.yaml,line=10,title=karmactl::Deployment default/nginx: spec.replicas" \
        in bad.stdout
    assert comment.read_text().startswith("### karmactl plan: invalid input")

    # merged: the pipeline on main runs it on the members and commits their status
    _git(dev, "checkout", "-q", "main")
    _git(dev, "merge", "-q", "--ff-only", "scale")
    _git(dev, "push", "-q", "origin", "main")
    ci2 = _ci_checkout(origin, tmp_path / "ci2", "main", two_members)
    assert "karmactl-ci: committed" in _run([str(SCRIPT), "apply"], ci2).stdout
    kubectl = shutil.which("kubectl")
    replicas = {srv.name: _run([kubectl, "--kubeconfig", str(ci2 / "state" / ".karmactl" / "kubeconfigs" / srv.name),
                                "--cache-dir", str(tmp_path / "kubectl-cache"), "get", "deploy", "nginx", "-n", "default",
                                "-o", "jsonpath={.spec.replicas}"], ci2).stdout
                for srv in two_members}
    assert replicas == {"member1": "2", "member2": "4"}

    # settled: the next pipeline has nothing to commit
    ci3 = _ci_checkout(origin, tmp_path / "ci3", "main", two_members)
    assert "nothing to commit" in _run([str(SCRIPT), "apply"], ci3).stdout


def test_ci_files_post_the_markdown_plan_without_member_credentials():
    """docs/gitops/: the merge-request jobs write the Markdown plan and post it; neither the plan
    job nor the comment job reads a member's kubeconfig (docs/security.md)."""
    import yaml

    github = yaml.safe_load((ROOT / "docs" / "gitops" / "github-actions.yml").read_text())
    gitlab = yaml.safe_load((ROOT / "docs" / "gitops" / "gitlab-ci.yml").read_text())
    gh_plan, gh_comment = github["jobs"]["plan"], github["jobs"]["plan-comment"]
    assert any(step.get("env", {}).get("KARMACTL_PLAN_MARKDOWN") == "karmactl-plan.md" for step in gh_plan["steps"])
    assert gh_comment["needs"] == "plan" and gh_comment["permissions"] == {"pull-requests": "write"}
    assert not any("actions/checkout" in str(step.get("uses")) for step in gh_comment["steps"])  # runs no PR code
    assert "gh pr comment" in str(gh_comment["steps"]) and "--body-file karmactl-plan.md" in str(gh_comment["steps"])
    gl_plan, gl_comment = gitlab["plan"], gitlab["plan-comment"]
    assert gl_plan["variables"]["KARMACTL_PLAN_MARKDOWN"] == "karmactl-plan.md"
    assert gl_plan["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert "/merge_requests/$CI_MERGE_REQUEST_IID/notes" in str(gl_comment["script"]) and gl_comment["needs"] == ["plan"]
    for job in (gh_plan, gh_comment, gl_plan, gl_comment):
        text = str(job)
        assert "KUBECONFIG" not in text and "kubeconfigs" not in text and "--online" not in text
