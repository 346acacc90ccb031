"""Incremental offline runs (``karmactl/incremental/runindex.py``, ``karmactl/incremental/partial.py``): after any
sequence of edits and clock moves, a run that uses the index of the last run leaves ``computed/``
byte for byte as a run without it would, and fails the same way."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from karmactl import reconcile
from karmactl.api.objects import add_seconds
from karmactl.incremental import runindex
from karmactl.incremental.engine import index_tag
from karmactl.store.state import StateStore
from tests.conftest import NOW, cluster_yaml, write

CLUSTERS = ("member1", "member2", "member3")
APPS = 4


def deployment(i: int, replicas: int = 2, image: str = "1.0", tier: str = "web", ns: str = "default") -> str:
    return f"""
    apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: app{i}, namespace: {ns}, labels: {{tier: {tier}}}}}
    spec:
      replicas: {replicas}
      selector: {{matchLabels: {{app: app{i}}}}}
      template:
        metadata: {{labels: {{app: app{i}}}}}
        spec: {{containers: [{{name: main, image: "registry.example/app{i}:{image}"}}]}}
    """


def policy(name: str, tier: str, clusters: tuple, weights: tuple | None = None, toleration: int | None = None) -> str:
    if weights:
        rows = "\n".join(f"            - {{targetCluster: {{clusterNames: [{c}]}}, weight: {w}}}"
                         for c, w in zip(clusters, weights))
        scheduling = f"""replicaScheduling:
          replicaSchedulingType: Divided
          replicaDivisionPreference: Weighted
          weightPreference:
            staticWeightList:
{rows}"""
    else:
        scheduling = "replicaScheduling: {replicaSchedulingType: Duplicated}"
    tolerations = ""
    if toleration is not None:
        tolerations = (f"\n        clusterTolerations: [{{key: cluster.karmada.io/not-ready, operator: Exists, "
                       f"effect: NoExecute, tolerationSeconds: {toleration}}}]")
    return f"""
    apiVersion: policy.karmada.io/v1alpha1
    kind: PropagationPolicy
    metadata: {{name: {name}, namespace: default}}
    spec:
      resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, labelSelector: {{matchLabels: {{tier: {tier}}}}}}}]
      placement:
        clusterAffinity: {{clusterNames: [{", ".join(clusters)}]}}{tolerations}
        {scheduling}
      failover:
        cluster: {{purgeMode: Gracefully}}
    """


def named_policy_yaml(name: str, target: str, priority: int, clusters: tuple, preempt: bool,
                      kind: str = "PropagationPolicy") -> str:
    """A policy whose one resource selector names Deployment ``target`` (``shards.reach_of``)."""
    namespace = ", namespace: default" if kind == "PropagationPolicy" else ""
    return f"""
    apiVersion: policy.karmada.io/v1alpha1
    kind: {kind}
    metadata: {{name: {name}{namespace}}}
    spec:
      resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, namespace: default, name: {target}}}]
      priority: {priority}
      preemption: {"Always" if preempt else "Never"}
      placement:
        clusterAffinity: {{clusterNames: [{", ".join(clusters)}]}}
        replicaScheduling: {{replicaSchedulingType: Duplicated}}
    """


_TICK = [0]


def put(path: Path, text: str) -> None:
    """Write like ``conftest.write``, then date the file an hour back, one second later than the
    previous file written here: a fresh mtime would make the next runs read it again anyway (a file
    modified less than a second before a run is "racily clean", ``runindex.RACY_NS``), which would
    hide what the index spares; a distinct one keeps every edit visible in the signature."""
    write(path, text)
    _TICK[0] += 1
    when = time.time() - 3600 + _TICK[0] * 0.001
    os.utime(path, (when, when))


def make_state(root: Path) -> None:
    for c in CLUSTERS:
        put(root / "clusters" / f"{c}.yaml", cluster_yaml(c))
    for i in range(APPS):
        put(root / "apps" / f"app{i}.yaml", deployment(i, tier="web" if i % 2 else "batch"))
    # two templates in one file
    put(root / "apps" / "pair.yaml", deployment(10) + "---\n" + deployment(11, tier="batch"))
    put(root / "policies" / "web.yaml", policy("web", "web", ("member1", "member2", "member3"), (1, 2, 1), 60))
    put(root / "policies" / "batch.yaml", policy("batch", "batch", ("member1", "member2")))
    # named policies may preempt (``named_policy``)
    put(root / "settings.yaml", """
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: karmactl-config, namespace: karmada-system}
    data: {propagationPolicyPreemption: "true"}
    """)


def computed_tree(root: Path) -> dict:
    base = root / "computed"
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()} \
        if base.is_dir() else {}


def outcome(root: Path, now: str, used: list | None = None):
    """``("ok", warnings)`` or ``(error type, message)`` of one offline run; ``used`` receives how
    it used the index."""
    try:
        report = reconcile.run(StateStore(root), reconcile.RunOptions(now=now, offline=True))
    except (reconcile.InputError, reconcile.NotConvergedError) as exc:
        if used is not None:
            used.append(type(exc).__name__)
        return type(exc).__name__, str(exc)
    if used is not None:
        used.append(report.incremental)
    return "ok", sorted(report.warnings)


def copy_without_index(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".karmactl"), symlinks=True)


# ------------------------------------------------------------------------------------------ edits

def edit_template(root: Path, i: int, replicas: int, image: str, tier: str) -> None:
    put(root / "apps" / f"app{i}.yaml", deployment(i, replicas, image, tier))


def edit_pair(root: Path, replicas: int) -> None:
    put(root / "apps" / "pair.yaml", deployment(10, replicas) + "---\n" + deployment(11, replicas, tier="batch"))


def remove_template(root: Path, i: int) -> None:
    (root / "apps" / f"app{i}.yaml").unlink(missing_ok=True)


def edit_policy(root: Path, which: str, toleration: int | None, weight: int) -> None:
    if which == "web":
        put(root / "policies" / "web.yaml", policy("web", "web", ("member1", "member2", "member3"), (1, weight, 1),
                                                    toleration))
    else:
        put(root / "policies" / "batch.yaml", policy("batch", "batch", ("member1", "member2"), None, toleration))


def named_policy(root: Path, name: str, target: str, priority: int, clusters: tuple, preempt: bool,
                 kind: str) -> None:
    """Add or rewrite policy ``name`` (its file): it may now name another template (a rename), have
    another priority, preemption, placement or kind."""
    put(root / "policies" / f"named-{name}.yaml", named_policy_yaml(name, target, priority, clusters, preempt, kind))


def remove_named_policy(root: Path, name: str) -> None:
    (root / "policies" / f"named-{name}.yaml").unlink(missing_ok=True)


def kind_policy(root: Path, present: bool) -> None:
    """A ClusterPropagationPolicy selecting every Deployment (no name: any template may be reached)."""
    path = root / "policies" / "every-deployment.yaml"
    if not present:
        path.unlink(missing_ok=True)
        return
    put(path, """
    apiVersion: policy.karmada.io/v1alpha1
    kind: ClusterPropagationPolicy
    metadata: {name: every-deployment}
    spec:
      resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
      placement:
        clusterAffinity: {clusterNames: [member3]}
        replicaScheduling: {replicaSchedulingType: Duplicated}
    """)


def edit_bundle(root: Path, replicas: int, clusters: tuple, target: str) -> None:
    """A template and a named policy in one file."""
    put(root / "apps" / "bundle.yaml", deployment(20, replicas, tier="none") + "---\n"
        + named_policy_yaml("bundle", target, 1, clusters, True))


def edit_cluster(root: Path, name: str, ready: str) -> None:
    put(root / "clusters" / f"{name}.yaml", cluster_yaml(name, ready))


def break_file(root: Path, i: int) -> None:
    put(root / "apps" / f"app{i}.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: [\n")


def duplicate(root: Path, i: int) -> None:
    put(root / "apps" / f"copy-of-app{i}.yaml", deployment(i))


def edit_settings(root: Path, timeout: int, failover: str) -> None:
    put(root / "settings.yaml", f"""
    apiVersion: v1
    kind: ConfigMap
    metadata: {{name: karmactl-config, namespace: karmada-system}}
    data: {{gracefulEvictionTimeout: "{timeout}s", clusterFailover: "{failover}", propagationPolicyPreemption: "true"}}
    """)


def hand_edit_computed(root: Path) -> None:
    works = sorted((root / "computed" / "works").rglob("*.json")) if (root / "computed" / "works").is_dir() else []
    if works:
        works[0].unlink()


TARGETS = ("app0", "app1", "app2", "app3", "app10", "app20", "ghost")  # app10 shares pair.yaml; no ghost
PLACEMENTS = (("member1",), ("member2", "member3"))
EDITS = st.one_of(
    st.tuples(st.just(named_policy), st.sampled_from(["pin", "pin2"]), st.sampled_from(TARGETS),
              st.sampled_from([0, 5, 10]), st.sampled_from(PLACEMENTS), st.booleans(),
              st.sampled_from(["PropagationPolicy", "ClusterPropagationPolicy"])),
    st.tuples(st.just(remove_named_policy), st.sampled_from(["pin", "pin2"])),
    st.tuples(st.just(kind_policy), st.booleans()),
    st.tuples(st.just(edit_bundle), st.integers(1, 3), st.sampled_from(PLACEMENTS), st.sampled_from(TARGETS)),
    st.tuples(st.just(edit_template), st.integers(0, APPS - 1), st.integers(0, 6), st.sampled_from(["1.0", "2.0"]),
              st.sampled_from(["web", "batch", "none"])),
    st.tuples(st.just(edit_pair), st.integers(1, 5)),
    st.tuples(st.just(remove_template), st.integers(0, APPS - 1)),
    st.tuples(st.just(edit_policy), st.sampled_from(["web", "batch"]), st.sampled_from([None, 0, 60, 600]),
              st.integers(1, 3)),
    st.tuples(st.just(edit_cluster), st.sampled_from(CLUSTERS), st.sampled_from(["True", "False"])),
    st.tuples(st.just(break_file), st.integers(0, APPS - 1)),
    st.tuples(st.just(duplicate), st.integers(0, APPS - 1)),
    st.tuples(st.just(hand_edit_computed)),
    st.tuples(st.just(edit_settings), st.sampled_from([30, 600]), st.sampled_from(["true", "false"])),
)
# steps without edits are frequent: the clock alone must wake what is due (tolerations, grace periods)
STEP = st.tuples(st.one_of(st.just([]), st.lists(EDITS, max_size=2)), st.sampled_from([0, 1, 30, 61, 301, 700]))
EXAMPLES = int(os.environ.get("KARMACTL_INCREMENTAL_EXAMPLES", "6"))  # CI: 6; set it for long runs


def check_steps(steps) -> list:
    """Apply each step's edits, move the clock by its seconds, and compare a run that uses the index
    with a run without it on a copy (outcome and the whole ``computed/`` tree). Returns how each run
    used the index (``RunReport.incremental``, or the error's type)."""
    used = []
    with tempfile.TemporaryDirectory() as tmp:
        root, cold = Path(tmp) / "state", Path(tmp) / "cold"
        make_state(root)
        now = NOW
        assert outcome(root, now)[0] == "ok"
        for edits, seconds in steps:
            for edit, *args in edits:
                edit(root, *args)
            now = add_seconds(now, seconds)
            shutil.rmtree(cold, ignore_errors=True)
            copy_without_index(root, cold)
            expected = outcome(cold, now)
            got = outcome(root, now, used)
            assert got[0] == expected[0], (got, expected)
            if got[0] != "ok":
                assert got == expected
            assert computed_tree(root) == computed_tree(cold), (used, now)
    return used


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(STEP, min_size=1, max_size=6))
def test_incremental_runs_write_what_full_runs_write(steps):
    check_steps(steps)


# policy edits (names: partial; labels or a whole kind: full) among template edits, in every step
POLICY_EDITS = st.one_of(
    st.tuples(st.just(named_policy), st.sampled_from(["pin", "pin2"]), st.sampled_from(TARGETS),
              st.sampled_from([0, 5, 10]), st.sampled_from(PLACEMENTS), st.booleans(),
              st.sampled_from(["PropagationPolicy", "ClusterPropagationPolicy"])),
    st.tuples(st.just(remove_named_policy), st.sampled_from(["pin", "pin2"])),
    st.tuples(st.just(edit_bundle), st.integers(1, 3), st.sampled_from(PLACEMENTS), st.sampled_from(TARGETS)),
    st.tuples(st.just(edit_template), st.integers(0, APPS - 1), st.integers(0, 6), st.sampled_from(["1.0", "2.0"]),
              st.sampled_from(["web", "batch", "none"])),
    st.tuples(st.just(kind_policy), st.booleans()),
    st.tuples(st.just(edit_policy), st.sampled_from(["web", "batch"]), st.sampled_from([None, 0, 60, 600]),
              st.integers(1, 3)),
)
POLICY_STEP = st.tuples(st.lists(POLICY_EDITS, min_size=1, max_size=2), st.sampled_from([0, 1, 61]))


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(POLICY_STEP, min_size=1, max_size=6))
def test_policy_edits_write_what_full_runs_write(steps):
    check_steps(steps)


@pytest.mark.parametrize("steps", [
    # member2 goes NotReady: the web apps tolerate it for 60 s (their wake time), the batch apps leave
    pytest.param([([(edit_cluster, "member2", "False")], 1), ([], 30), ([], 31), ([], 1)], id="toleration-ends"),
    # evictions leave graceful eviction tasks that time out after gracefulEvictionTimeout
    pytest.param([([(edit_settings, 30, "true")], 0), ([(edit_cluster, "member1", "False")], 1), ([], 29),
                  ([], 2)], id="grace-period-ends"),
])
def test_the_clock_alone_wakes_what_is_due(steps):
    used = check_steps(steps)
    assert used[-1] != "unchanged" and not used[-1].startswith("full"), used  # woken, not recomputed whole


# ------------------------------------------------------------------------------------ targeted


@pytest.fixture
def ran(state) -> Path:
    make_state(state)
    assert outcome(state, NOW)[0] == "ok"
    return state


def test_unchanged_run_reads_no_file_and_writes_nothing(ran, monkeypatch):
    before = {p: p.stat().st_mtime_ns for p in (ran / "computed").rglob("*")}

    def no_load(*_a, **_k):
        raise AssertionError("an unchanged run loaded the state directory")

    monkeypatch.setattr(reconcile, "load", no_load)
    report = reconcile.run(StateStore(ran), reconcile.RunOptions(now=add_seconds(NOW, 60), offline=True))
    assert report.changes == []
    assert {p: p.stat().st_mtime_ns for p in (ran / "computed").rglob("*")} == before


def test_one_template_changed_writes_only_its_files(ran, monkeypatch):
    edit_template(ran, 1, 5, "2.0", "web")
    monkeypatch.setattr(reconcile, "load", lambda *_a, **_k: pytest.fail("a one-template change ran in full"))
    report = reconcile.run(StateStore(ran), reconcile.RunOptions(now=add_seconds(NOW, 60), offline=True))
    assert report.changes
    for _action, rel in report.changes:
        if rel.startswith("computed/events/"):
            # an Event file holds a bucket of objects: those changed hold Events of app1's objects
            import json
            names = {e["regarding"]["name"] for e in json.loads((ran / rel).read_text())["items"]}
            assert any("app1" in n for n in names), (rel, names)
        else:
            assert "app1" in rel, rel


@pytest.mark.parametrize("damage", ["garbage", "empty", "other-karmactl", "detail", "other-detail"])
def test_a_corrupt_or_foreign_index_costs_a_full_run(ran, damage):
    path = Path(runindex.index_path(ran))
    detail = path.with_name(runindex.DETAIL_FILE)
    if damage == "detail":  # the signatures are intact: the edit is seen, but not what it reaches
        detail.write_bytes(b"\x00not json")
    elif damage == "other-detail":  # a detail file of another run (its token)
        detail.write_bytes(detail.read_bytes().replace(b'"token":"', b'"token":"0', 1))
    elif damage == "garbage":
        path.write_bytes(b"\x00not json")
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.write_bytes(path.read_bytes().replace(b'"tag":"karmactl-', b'"tag":"other-'))
    edit_template(ran, 2, 4, "1.0", "batch")
    cold = ran.parent / "cold"
    copy_without_index(ran, cold)
    used: list = []
    assert outcome(ran, NOW, used) == outcome(cold, NOW)
    assert used[0].startswith("full")
    assert computed_tree(ran) == computed_tree(cold)
    index = runindex.read_index(ran, index_tag())
    assert index is not None and runindex.read_detail(ran, index)  # rebuilt


def written_apps(root: Path, changes: list) -> set:
    """The apps (``appN``) whose files a run wrote, by the names of the computed files written;
    each Event file written (a bucket of several objects' Events) must hold Events about one."""
    import json
    import re

    app = re.compile(r"(app\d+)(?:[-.]|$)")
    apps, buckets = set(), []
    for _action, rel in changes:
        if rel.startswith("computed/events/"):
            buckets.append((rel, {e["regarding"]["name"] for e in json.loads((root / rel).read_text())["items"]}))
        else:
            m = app.match(rel.rsplit("/", 1)[-1])
            assert m, rel  # nothing but apps' files
            apps.add(m.group(1))
    for rel, names in buckets:
        assert any(app.match(n) and app.match(n).group(1) in apps for n in names), (rel, names)
    return apps


def pin(target: str, priority: int = 5, clusters: tuple = ("member1",), kind: str = "PropagationPolicy"):
    return (named_policy, "pin", target, priority, clusters, True, kind)


@pytest.mark.parametrize("steps", [
    pytest.param([
        # a new policy naming app1 takes it from web (preemption): app1 alone
        ([pin("app1")], "partial: 1 template(s), 1 policy(ies) changed", {"app1"}),
        # renamed to app3: app1 (named by the old version, and claimed) goes back to web, app3 moves
        ([pin("app3")], "partial: 2 template(s), 1 policy(ies) changed", {"app1", "app3"}),
        # new placement: app3 alone; new priority: app3 recomputed, nothing to write
        ([pin("app3", clusters=("member2", "member3"))], "partial: 1 template(s), 1 policy(ies) changed", {"app3"}),
        ([pin("app3", priority=10, clusters=("member2", "member3"))],
         "partial: 1 template(s), 1 policy(ies) changed", set()),
        # app10 shares pair.yaml with app11, which is not recomputed
        ([pin("app10")], "partial: 2 template(s), 1 policy(ies) changed", {"app3", "app10"}),
        # removed: what it claimed (app10) goes back to web
        ([(remove_named_policy, "pin")], "partial: 1 template(s), 1 policy(ies) changed", {"app10"}),
        # app2 leaves batch's label selector in the run a ClusterPropagationPolicy naming it comes
        ([(edit_template, 2, 2, "1.0", "none"), pin("app2", kind="ClusterPropagationPolicy")],
         "partial: 1 template(s), 1 policy(ies) changed", {"app2"}),
        # a policy naming a template that does not exist
        ([(named_policy, "pin2", "ghost", 0, ("member1",), False, "PropagationPolicy")],
         "partial: 0 template(s), 1 policy(ies) changed", set()),
        # a template and a policy naming it in one file; then the policy names app0 instead
        ([(edit_bundle, 2, ("member1",), "app20")], "partial: 1 template(s), 1 policy(ies) changed", {"app20"}),
        ([(edit_bundle, 2, ("member1",), "app0")], "partial: 2 template(s), 1 policy(ies) changed",
         {"app0", "app20"}),
    ], id="named-policies"),
    pytest.param([
        # pin claims app1; pin2 names it too but does not claim it
        ([pin("app1")], "partial: 1 template(s), 1 policy(ies) changed", {"app1"}),
        ([(named_policy, "pin2", "app1", 1, ("member2",), False, "PropagationPolicy")],
         "partial: 1 template(s), 1 policy(ies) changed", set()),
        # pin2 edited: the shared file keeps it in place of its old version
        ([(named_policy, "pin2", "app1", 1, ("member3",), False, "PropagationPolicy")],
         "partial: 1 template(s), 1 policy(ies) changed", set()),
        # pin removed: the run must find pin2's new version by the name it selects, and app1 goes to it
        ([(remove_named_policy, "pin")], "partial: 1 template(s), 1 policy(ies) changed", {"app1"}),
    ], id="a-policy-rewritten-in-the-shared-file-is-found-by-name"),
    pytest.param([
        ([(edit_policy, "web", None, 3)], "full: PropagationPolicy default/web changed and selects without a name",
         None),
        ([(kind_policy, True)], "full: ClusterPropagationPolicy every-deployment changed and selects without a name",
         None),
    ], id="label-and-kind-selectors-run-in-full"),
])
def test_a_policy_change_recomputes_the_templates_it_reaches(ran, steps):
    """``policy_change_owners``: the templates a name-selecting policy selected, selects or claims
    are recomputed, and only their files written; any other policy change is a full run."""
    cold = ran.parent / "cold"
    for edits, expected, apps in steps:
        for edit, *args in edits:
            edit(ran, *args)
        shutil.rmtree(cold, ignore_errors=True)
        copy_without_index(ran, cold)
        report = reconcile.run(StateStore(ran), reconcile.RunOptions(now=NOW, offline=True))
        assert report.incremental == expected, (edits, report.incremental)
        if apps is not None:
            assert written_apps(ran, report.changes) == apps, (edits, report.changes)
        assert outcome(cold, NOW)[0] == "ok"
        assert computed_tree(ran) == computed_tree(cold), edits


def test_verbose_run_says_how_it_used_the_index(ran, cli):
    cli.state = ran
    code, _out, err = cli("-v", "reconcile", "--offline", "--now", NOW)
    assert code == 0 and "run: unchanged" in err and "0 file(s) changed" in err
    edit_template(ran, 3, 1, "1.0", "web")
    code, _out, err = cli("-v", "reconcile", "--offline", "--now", NOW)
    assert code == 0 and "run: partial: 1 template(s)" in err, err


def test_lua_customizations_make_every_run_a_full_one(ran):
    """Lua may read the clock (os.time): with a ResourceInterpreterCustomization no run is spared."""
    write(ran / "customizations.yaml", """
    apiVersion: config.karmada.io/v1alpha1
    kind: ResourceInterpreterCustomization
    metadata: {name: deploy-replicas}
    spec:
      target: {apiVersion: apps/v1, kind: Deployment}
      customizations:
        replicaResource:
          luaScript: |
            function GetReplicas(obj)
              return obj.spec.replicas, {}
            end
    """)
    first = reconcile.run(StateStore(ran), reconcile.RunOptions(now=NOW, offline=True))
    assert first.incremental.startswith("full: ")
    again = reconcile.run(StateStore(ran), reconcile.RunOptions(now=NOW, offline=True))
    assert again.incremental.startswith("full: a time-based rule of the whole state is due"), again.incremental


def test_a_file_rewritten_within_one_clock_tick_is_read_again(ran):
    """An edit the signature cannot show (same size, inode and mtime: two writes within one tick of
    the file system's coarse clock) is still seen: a file modified just before a run is re-read."""
    path = ran / "apps" / "app1.yaml"
    write(path, deployment(1, 5, "2.0", "web"))
    assert outcome(ran, NOW)[0] == "ok"
    first = path.stat()
    path.write_text(path.read_text().replace("replicas: 5", "replicas: 6"))
    os.utime(path, ns=(first.st_atime_ns, first.st_mtime_ns))
    assert [path.stat().st_mtime_ns, path.stat().st_size, path.stat().st_ino] == \
        [first.st_mtime_ns, first.st_size, first.st_ino]
    cold = ran.parent / "cold"
    copy_without_index(ran, cold)
    assert outcome(ran, NOW) == outcome(cold, NOW)
    assert computed_tree(ran) == computed_tree(cold)
    assert b'"replicas": 6' in (ran / "computed/resourcebindings/default/app1-deployment.json").read_bytes()


@pytest.mark.parametrize("edit", ["in-place", "removed"])
def test_a_split_check_of_computed_files_sees_a_hand_edit_in_any_directory(ran, monkeypatch, edit):
    # at 10,000 templates computed/ is checked by two processes, the directories split between them
    # (runindex.computed_check); here with any count, and an edit in each directory in turn
    monkeypatch.setattr(runindex, "FORK_CHECK_MIN", 1)
    used: list = []
    assert outcome(ran, NOW, used) == ("ok", []) and used == ["unchanged"]
    dirs = sorted({p.parent for p in (ran / "computed").rglob("*.json") if "events" not in p.parts})
    assert len(dirs) > 3
    for directory in dirs:
        path = sorted(directory.glob("*.json"))[0]
        if edit == "in-place":  # same inode, same directory: only the file's own signature tells
            with open(path, "r+b") as fh:
                fh.write(path.read_bytes().replace(b'"metadata": {', b'"metadata":  {', 1))
        else:
            path.unlink()
        assert outcome(ran, NOW, used) == ("ok", []), path
        assert used[-1] == "full: computed/ changed since the last run", path
        assert path.exists()  # a removed file is computed again
        assert outcome(ran, NOW, used) == ("ok", []) and used[-1] == "unchanged"
