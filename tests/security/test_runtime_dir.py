"""Issue 23, the state directory's runtime part: a merge request is untrusted input.

A stranger's merge request can commit anything under ``state/``: a journal karmactl would replay, a
``.karmactl`` symlink or a whole committed runtime directory, file names that are not UTF-8, an
ignore file whose patterns backtrack. And the machine a job runs on can refuse writes (read-only,
full, permission, path length). Each test below plays one of these and checks what a reviewer of the
job would see: nothing outside the state directory touched, no code run (canary), no exit 70, no
hang, an error naming the path.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.security.mr import REPO, Result, assert_refused, canary, run

NOW = "2026-01-01T00:00:00Z"

CLUSTER = """apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m1}
spec: {syncMode: Push, apiEndpoint: "https://127.0.0.1:1"}
"""
DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
"""
POLICY = """apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [m1]}}
"""


def make_state(base: Path, reconciled: bool = True) -> Path:
    """A small state directory (a Cluster, a Deployment, its policy), reconciled once."""
    state = base / "state"
    state.mkdir(parents=True)
    (state / "cluster.yaml").write_text(CLUSTER)
    (state / "web.yaml").write_text(DEPLOY)
    (state / "policy.yaml").write_text(POLICY)
    if reconciled:
        r = run(state, "reconcile", "--offline", "--now", NOW)
        assert r.code == 0, r.err
    return state


def tree(root: Path) -> dict:
    """``{relative path: bytes or '->target' or 'dir'}`` of everything under ``root`` but ``.karmactl``."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".karmactl"]
        for name in dirs + files:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            out[rel] = ("->" + os.readlink(p)) if p.is_symlink() else ("dir" if p.is_dir() else p.read_bytes())
    return out


def write_journal(state: Path, job) -> Path:
    runtime = state / ".karmactl"
    runtime.mkdir(exist_ok=True)
    path = runtime / "journal.json"
    path.write_text(json.dumps(job))
    return path


# ------------------------------------------------------------------ 1. committed journal
def _old(renames=(), deletes=(), staging=None) -> dict:
    """A journal as karmactl before this fix wrote it (absolute paths, no format)."""
    return {"renames": [list(r) for r in renames], "deletes": [list(d) for d in deletes], "staging": staging}


def _new(renames=(), deletes=(), staging=None) -> dict:
    return {"format": 2, **_old(renames, deletes, staging)}


def test_committed_journal_moves_nothing_out_of_or_into_the_state_directory(tmp_path):
    state = make_state(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("outside\n")
    doomed = tmp_path / "doomed.txt"
    doomed.write_text("outside\n")
    kubeconfigs = state / ".karmactl" / "kubeconfigs"
    kubeconfigs.mkdir(parents=True)
    (kubeconfigs / "ci.yaml").write_text("kind: Config\n")
    (tmp_path / "elsewhere").mkdir()
    (state / "linked").symlink_to(tmp_path / "elsewhere")
    (state / "linked" / ".karmactl-1-0.tmp").write_text("x")
    before = tree(state)
    attacks = [
        _old(renames=[(str(victim), str(state / "stolen.yaml"))]),        # a file outside moved in
        _old(deletes=[(str(doomed), str(tmp_path))]),                      # a file outside deleted
        _old(renames=[(str(kubeconfigs / "ci.yaml"), str(tmp_path / "leak.yaml"))]),  # the CI kubeconfig out
        _new(renames=[("../victim.txt", "stolen.yaml")]),                  # relative, but ..
        _new(renames=[(".karmactl/kubeconfigs/ci.yaml", "leak.yaml")]),    # not karmactl's temporary file
        _new(renames=[(".karmactl/staging.1/x", ".git/hooks/pre-commit")], staging=".karmactl/staging.1"),
        _new(renames=[("linked/.karmactl-1-0.tmp", "linked/x.yaml")]),     # through a symlinked directory
        _new(deletes=[("../doomed.txt", "")]),
        _new(deletes=[("cluster.yaml", "")], staging="/tmp"),              # staging elsewhere
        _new(renames=[(".karmactl-1-0.tmp", ".karmactl/lock")]),           # into the runtime directory
    ]
    for job in attacks:
        journal = write_journal(state, job)
        r = run(state, "get", "clusters")
        assert r.code == 0, (job, r.err)
        assert "m1" in r.out
        assert f"{journal}: journal not replayed" in r.err, (job, r.err)
        assert not journal.exists() and (state / ".karmactl" / "journal.json.rejected").exists()
        assert victim.read_text() == "outside\n" and doomed.read_text() == "outside\n"
        assert (kubeconfigs / "ci.yaml").exists() and not (tmp_path / "leak.yaml").exists()
        assert tree(state) == before, job
    assert "journal not replayed" not in run(state, "get", "clusters").err  # set aside once


def test_committed_journal_cannot_rename_over_a_module_karmactl_imports(tmp_path):
    """The finding: a journal renamed a file of the merge request over a Python module on karmactl's
    path, which the same command then imported (here ``pathspec``, imported for ``.karmactlignore``)."""
    state = make_state(tmp_path)
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    mark = canary(tmp_path)
    (state / "evil.py").write_text(f"open({str(mark)!r}, 'w').write('pwned')\n")
    (state / ".karmactlignore").write_text("*.md\n")
    write_journal(state, _old(renames=[(str(state / "evil.py"), str(shadow / "pathspec.py"))]))
    r = run(state, "get", "clusters", env={"PYTHONPATH": f"{shadow}{os.pathsep}{REPO}"})
    assert not mark.exists(), "the journal ran code"
    assert r.code == 0, r.err
    assert not (shadow / "pathspec.py").exists()
    assert "journal not replayed" in r.err


@pytest.mark.parametrize("text", ["[]", "not json", '{"format": 2, "renames": [["a"]], "deletes": [], "staging": null}'])
def test_malformed_journal_is_set_aside_not_fatal_forever(tmp_path, text):
    state = make_state(tmp_path)
    (state / ".karmactl" / "journal.json").write_text(text)
    first = run(state, "reconcile", "--offline", "--now", NOW)
    assert first.code == 0, first.err
    assert "journal not replayed" in first.err
    second = run(state, "plan")
    assert second.code == 0, second.err
    assert "journal not replayed" not in second.err


def test_a_journal_karmactl_wrote_is_still_replayed(tmp_path):
    """The checks let karmactl's own batches through: a killed apply (its journal written, nothing
    renamed) is finished by the next reading command."""
    state = make_state(tmp_path)
    hook = "import karmactl.store.fsio as f\nf._CRASH_POINT = lambda where: os._exit(9)"
    (tmp_path / "new.yaml").write_text(DEPLOY.replace("name: web", "name: api"))
    code = (f"import os\n{hook}\nfrom karmactl.cli.main import run\n"
            f"run({['--state', str(state), 'apply', '-f', str(tmp_path / 'new.yaml')]!r})\n")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    assert (state / ".karmactl" / "journal.json").exists()
    r = run(state, "get", "deployments")
    assert r.code == 0 and "api" in r.out, r.err
    assert "journal not replayed" not in r.err


# ------------------------------------------------------------------ 2. the runtime directory
def test_symlinked_runtime_dir_is_refused(tmp_path):
    state = make_state(tmp_path, reconciled=False)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "members" / "member1").mkdir(parents=True)
    (elsewhere / "members" / "member1" / "data").write_text("keep\n")
    (state / ".karmactl").symlink_to(elsewhere)
    for args in (("plan",), ("get", "clusters"), ("reconcile", "--offline", "--now", NOW), ("local-down", "--purge")):
        r = run(state, *args)
        assert_refused(r, ".karmactl", "symbolic link")
    assert tree(elsewhere) == {"members": "dir", "members/member1": "dir", "members/member1/data": b"keep\n"}


def test_symlinks_inside_the_runtime_dir_are_not_followed_out(tmp_path):
    state = make_state(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    runtime = state / ".karmactl"
    shutil.rmtree(runtime / "cache")
    (runtime / "cache").symlink_to(outside)            # the parse cache's directory
    (runtime / "staging.999999").symlink_to(outside)   # a staging tree
    r = run(state, "plan")
    assert r.code == 0, r.err
    assert list(outside.iterdir()) == []
    (state / "web.yaml").write_text(DEPLOY.replace("replicas: 2", "replicas: 3"))
    r = run(state, "reconcile", "--offline", "--now", NOW)
    assert r.code == 0, r.err
    assert list(outside.iterdir()) == []
    (runtime / "lock").unlink()
    (runtime / "lock").symlink_to(precious)            # the lock file (opened, truncated, written)
    r = run(state, "reconcile", "--offline", "--now", NOW)
    assert_refused(r, "lock", "symbolic link")
    assert precious.read_text() == "keep me\n"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_tracked_runtime_dir_is_refused(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    state = make_state(repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "state")  # .karmactl/ ignores itself: not committed
    assert run(state, "get", "clusters").code == 0  # an untracked runtime directory is fine
    (state / ".karmactl" / "journal.json").write_text("[]")
    _git(repo, "add", "-f", "state/.karmactl/journal.json")
    _git(repo, "commit", "-qm", "a merge request")
    for args in (("get", "clusters"), ("plan",), ("reconcile", "--offline", "--now", NOW)):
        r = run(state, *args)
        assert_refused(r, ".karmactl", "tracked by git", "git rm -r --cached")
    assert (state / ".karmactl" / "journal.json").read_text() == "[]"  # nothing of it used
    _git(repo, "rm", "-rq", "--cached", "state/.karmactl")
    r = run(state, "get", "clusters")
    assert r.code == 0, r.err


def test_damaged_runtime_files_are_rebuilt_not_fatal(tmp_path):
    state = make_state(tmp_path)
    runtime = state / ".karmactl"
    damaged = [b"[]", b'{"format": 3, "tag": "x", "files": {"a": 1}, "now": 1, "wakes": []}\n{"token": 1}']
    for data in damaged:
        for name in ("cache/parsed.json", "run-index.json", "run-index.detail.json", "run-index.shared.json"):
            (runtime / name).write_bytes(data)
        for args in (("reconcile", "--offline", "--now", NOW), ("get", "deployments"), ("plan",)):
            r = run(state, *args)
            assert r.code == 0, (data, args, r.err)
    # a cache of the right tag whose entries have the wrong shape
    cache = json.loads((runtime / "cache" / "parsed.json").read_text())
    for entry in cache["files"].values():
        entry["objs"] = [["not an object", 0, 1]]
    (runtime / "cache" / "parsed.json").write_text(json.dumps(cache))
    for args in (("get", "deployments"), ("plan",), ("reconcile", "--offline", "--now", NOW)):
        r = run(state, *args)
        assert r.code == 0, (args, r.err)


# ------------------------------------------------------------------ 3. environment errors: exit 6
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def _can(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def run_as(prefix: list[str], state: Path, *args: str, timeout: float = 60, cwd: Path | None = None) -> Result:
    """``run`` under ``prefix`` (e.g. without root's permission override), in ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("KARMACTL_STATE", None)
    start = time.monotonic()
    proc = subprocess.run([*prefix, sys.executable, "-m", "karmactl", "--state", str(state), *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=str(cwd or state.parent),
                          stdin=subprocess.DEVNULL)
    return Result(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def assert_environment(r: Result, path) -> None:
    assert r.code == 6, f"exit {r.code}: {r.err}"
    assert f"error: {path}" in r.err, r.err


needs_setpriv = pytest.mark.skipif(not _can([*NO_DAC, "true"]), reason="setpriv cannot drop capabilities here")


@needs_setpriv
def test_read_only_state_directory_exits_6(tmp_path):
    state = make_state(tmp_path, reconciled=False)
    before = tree(state)
    state.chmod(0o555)
    try:
        r = run_as(NO_DAC, state, "reconcile", "--offline", "--now", NOW)
    finally:
        state.chmod(0o755)
    assert_environment(r, state / ".karmactl")
    assert "Permission denied" in r.err
    assert tree(state) == before


@needs_setpriv
def test_mode_000_directory_exits_6(tmp_path):
    state = make_state(tmp_path)
    locked = state / "apps"
    locked.mkdir()
    (locked / "x.yaml").write_text(DEPLOY.replace("name: web", "name: x"))
    before = tree(state)
    locked.chmod(0)
    try:
        for args in (("reconcile", "--offline", "--now", NOW), ("plan",), ("get", "deployments")):
            r = run_as(NO_DAC, state, *args)
            assert_environment(r, locked)
            assert "Permission denied" in r.err
    finally:
        locked.chmod(0o755)
    assert tree(state) == before


def _in_mount_namespace(script: str, tmp_path: Path) -> dict:
    """Run ``script`` (Python, given ``base``) as root in a new mount namespace, where it may mount
    file systems that vanish with it; returns what it prints as JSON."""
    code = f"import json, os, subprocess, sys\nbase = {str(tmp_path)!r}\nREPO = {str(REPO)!r}\n" + script
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


needs_mount = pytest.mark.skipif(not _can(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"]),
                                 reason="cannot mount in a new mount namespace here")

_KARMACTL = """
def karmactl(state, *args):
    p = subprocess.run([sys.executable, "-m", "karmactl", "--state", state, *args], capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": REPO}, timeout=60)
    return p.returncode, p.stderr

def tree(root):
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".karmactl"]
        for f in files:
            out[os.path.relpath(os.path.join(d, f), root)] = open(os.path.join(d, f), "rb").read().hex()
    return out
"""


@needs_mount
def test_read_only_file_system_exits_6(tmp_path):
    state = make_state(tmp_path)
    (state / "web.yaml").write_text(DEPLOY.replace("replicas: 2", "replicas: 5"))
    out = _in_mount_namespace(_KARMACTL + textwrap.dedent("""
        state = os.path.join(base, "state")
        subprocess.run(["mount", "--bind", state, state], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", state], check=True)
        before = tree(state)
        code, err = karmactl(state, "reconcile", "--offline", "--now", "2026-01-01T00:00:00Z")
        plan = karmactl(state, "plan")
        print(json.dumps({"code": code, "err": err, "same": tree(state) == before, "plan": plan}))
        """), tmp_path)
    assert out["code"] == 6, out["err"]
    assert f"error: {state}" in out["err"] and "Read-only file system" in out["err"], out["err"]
    assert out["same"]
    assert out["plan"][0] == 1, out["plan"]  # a reader still reads a read-only state directory


@needs_mount
def test_full_disk_exits_6_and_leaves_the_tree_as_it_was(tmp_path):
    out = _in_mount_namespace(_KARMACTL + textwrap.dedent("""
        disk = os.path.join(base, "disk")
        os.mkdir(disk)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", disk], check=True)
        sys.path.insert(0, REPO)
        from benchmarks.reconcile_offline import generate
        from pathlib import Path
        state = os.path.join(disk, "state")
        generate(Path(state), 40, 3)
        os.makedirs(os.path.join(state, ".karmactl"))
        fd = os.open(os.path.join(disk, "filler"), os.O_WRONLY | os.O_CREAT)  # fill it, then leave 16 KB
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError:
            os.close(fd)
        os.truncate(os.path.join(disk, "filler"), os.path.getsize(os.path.join(disk, "filler")) - 16384)
        before = tree(state)
        code, err = karmactl(state, "reconcile", "--offline", "--now", "2026-01-01T00:00:00Z")
        leftovers = [n for n in os.listdir(os.path.join(state, ".karmactl")) if n.startswith(("staging", "journal"))]
        print(json.dumps({"code": code, "err": err, "same": tree(state) == before, "leftovers": leftovers}))
        """), tmp_path)
    assert out["code"] == 6, out["err"]
    assert "No space left on device" in out["err"] and "error: " in out["err"], out["err"]
    assert out["same"] and out["leftovers"] == []


def test_full_disk_at_the_write_edge_exits_6_naming_the_file(tmp_path):
    """Where no file system can be mounted: ENOSPC injected at the one place files are written."""
    state = make_state(tmp_path)
    (state / "web.yaml").write_text(DEPLOY.replace("replicas: 2", "replicas: 7"))
    before = tree(state)
    hook = ("import errno, karmactl.store.fsio as f\n_real = f._write_new\n"
            "def _full(path, *a, **k):\n    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
            "f._write_new = _full\n")
    code = (f"import os\n{hook}\nfrom karmactl.cli.main import run\n"
            f"run({['--state', str(state), 'reconcile', '--offline', '--now', NOW]!r})\n")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 6, proc.stderr
    assert f"error: {state}/computed/" in proc.stderr and "No space left on device" in proc.stderr
    assert tree(state) == before
    assert not [p for p in (state / ".karmactl").iterdir() if p.name.startswith(("staging", "journal"))]


def test_path_too_long_exits_6(tmp_path):
    # a state directory whose own path fits in PATH_MAX (4096) but whose computed files do not
    deep = tmp_path
    while len(str(deep)) < 4096 - 60:
        deep = deep / ("d" * min(200, 4096 - 60 - len(str(deep)) - 1))
    deep.mkdir(parents=True)
    state = deep / "s"
    state.mkdir()
    (state / "cluster.yaml").write_text(CLUSTER)
    (state / "web.yaml").write_text(DEPLOY)
    (state / "policy.yaml").write_text(POLICY)
    before = tree(state)
    r = run(state, "reconcile", "--offline", "--now", NOW)
    assert r.code == 6, r.err
    assert f"error: {state}/" in r.err and "File name too long" in r.err
    assert tree(state) == before
    # and a --state longer than PATH_MAX itself
    r = run_as([], Path("/" + "x/" * 2100), "get", "clusters", cwd=tmp_path)
    assert r.code == 6 and "File name too long" in r.err, r.err


def test_file_name_not_utf8_is_refused_naming_it(tmp_path):
    state = make_state(tmp_path)
    bad = os.path.join(os.fsencode(state), b"apps-\xff.yaml")
    with open(bad, "wb") as fh:
        fh.write(DEPLOY.replace("name: web", "name: other").encode())
    for args in (("reconcile", "--offline", "--now", NOW), ("plan",), ("get", "deployments")):
        r = run(state, *args)
        assert_refused(r, '"apps-\\377.yaml"', "not valid UTF-8")


# ------------------------------------------------------------------ 4. readers during a write
def test_plan_and_get_during_reconciles_read_a_consistent_tree(tmp_path):
    """Reconciles in a loop, each removing or restoring every template (so the commit deletes or
    creates some 500 computed files), while ``plan`` and ``get`` run: they never see half a commit.
    The writer's commit is slowed down (a few milliseconds per deleted file) so that readers do
    meet one."""
    sys.path.insert(0, str(REPO))
    from benchmarks.reconcile_offline import generate

    state = tmp_path / "state"
    generate(state, 40, 4)
    assert run(state, "reconcile", "--offline", "--now", NOW).code == 0
    reconcile = ("import time, karmactl.store.fsio as f\n_real = f._remove_now\n"
                 "def _slow(*a):\n    time.sleep(0.004)\n    return _real(*a)\n"
                 "f._remove_now = _slow\nfrom karmactl.cli.main import run\n"
                 f"run({['--state', str(state), 'reconcile', '--offline', '--now', NOW]!r})\n")
    loop = textwrap.dedent(f"""
        import os, subprocess, sys
        from pathlib import Path
        state, aside = Path({str(state)!r}), Path({str(tmp_path / "aside")!r})
        aside.mkdir()
        names = sorted(p.name for p in (state / "deployments").glob("*.yaml"))
        i = 0
        while True:
            i += 1
            for n in names:
                src, dst = (state / "deployments" / n, aside / n) if i % 2 else (aside / n, state / "deployments" / n)
                os.replace(src, dst)
            subprocess.run([sys.executable, "-c", {reconcile!r}], capture_output=True)
        """)
    writer = subprocess.Popen([sys.executable, "-c", loop], env={**os.environ, "PYTHONPATH": str(REPO)},
                              start_new_session=True)
    try:
        time.sleep(1.0)
        for i in range(6):
            r = run(state, "plan", "-o", "name") if i % 2 == 0 else run(state, "get", "works", "-A")
            assert r.code in (0, 1), f"exit {r.code}: {r.err[-2000:]}"
    finally:
        os.killpg(writer.pid, signal.SIGKILL)
        writer.wait()


def test_a_checkout_during_the_commit_is_not_an_internal_error(tmp_path):
    """A ``git checkout`` of a branch without ``computed/resourcebindings`` lands between a
    reconcile's staging and its renames (here: at its commit point): the commit still completes
    (exit 70 before)."""
    state = make_state(tmp_path)
    (state / "web.yaml").write_text(DEPLOY.replace("replicas: 2", "replicas: 4"))
    hook = ("import shutil, karmactl.store.fsio as f\ndone = []\n"  # once: at the first commit
            f"f._CRASH_POINT = lambda where: done or done.append(shutil.rmtree({str(state / 'computed' / 'resourcebindings')!r}))\n")
    code = (f"{hook}from karmactl.cli.main import run\n"
            f"run({['--state', str(state), 'reconcile', '--offline', '--now', NOW]!r})\n")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    binding = state / "computed" / "resourcebindings" / "default" / "web-deployment.json"
    assert '"replicas": 4' in binding.read_text()
    assert run(state, "plan").code == 0


# ------------------------------------------------------------------ 5. members' directories
def test_local_member_directories_are_private(tmp_path, monkeypatch):
    from karmactl.emulator import local

    class Started:
        pid = 0

    monkeypatch.setattr(local, "_spawn", lambda *a, **k: Started())
    d = local.members_root(tmp_path / "state") / "member1"
    local.start_member("member1", d)
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    monkeypatch.setattr(local, "_start_all", lambda plans, *a: ({}, {}))
    local.local_up(tmp_path / "state", count=1)
    assert stat.S_IMODE(local.members_root(tmp_path / "state").stat().st_mode) == 0o700


# ------------------------------------------------------------------ 6. ignore patterns
HANG_PATTERN = "/".join(["a/**"] * 9) + "/z\n"


def _deep(state: Path) -> Path:
    deep = state.joinpath(*["a"] * 60)
    deep.mkdir(parents=True)
    (deep / "x.yaml").write_text(DEPLOY.replace("name: web", "name: deep"))
    return deep


def test_ignore_patterns_match_in_linear_time(tmp_path):
    state = make_state(tmp_path)
    _deep(state)
    (state / ".karmactlignore").write_text(HANG_PATTERN + "policy.yaml\n!*/\n")
    r = run(state, "get", "deployments", timeout=30)
    assert r.code == 0, r.err
    assert "deep" in r.out and "web" in r.out
    r = run(state, "get", "propagationpolicies", timeout=30)
    assert r.code == 0 and "web" not in r.out  # policy.yaml is ignored: gitignore semantics hold
