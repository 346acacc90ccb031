"""People's files are theirs (issue 28, part 1): the editing commands change only the lines they
must, in files of any common style (mappings indented by 2 or 4, sequences indented or not, flow
collections, quoted strings, comments, several documents, CRLF line ends, no final newline), and leave an unchanged object's file
untouched.

The property test writes random objects in a random style with its own small emitter (not
ruamel's), runs one random edit through the CLI, and compares the file's lines before and after:
only the expected lines may differ, and the file must read as the edited objects
(``KARMACTL_FUZZ_EXAMPLES=500`` for a long run; 240 examples passed when it was written)."""
from __future__ import annotations

import difflib
import json
import os
import re
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from karmactl.cli.main import main_exit_code
from tests.conftest import write

WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "nginx", "web-1", "x.y", "v2"])
LABEL_KEYS = st.sampled_from(["app", "team", "tier", "example.com/owner", "env"])
TRICKY = st.sampled_from(["true", "123", "a: b", "# not a comment", "yes", "0755", "", "with space"])


class Style:
    """How the emitter writes YAML: mapping indent, dash offset of block sequences, quoting and
    flow choices drawn per value, comments."""

    def __init__(self, draw):
        self.indent = draw(st.sampled_from([2, 4]))
        self.offset = draw(st.sampled_from([0, self.indent] + ([2] if self.indent == 4 else [])))
        self.quote = draw(st.sampled_from(["plain", "single", "double", "mixed"]))
        self.flow_leaves = draw(st.booleans())
        self.comments = draw(st.booleans())
        self.leading_marker = draw(st.booleans())
        self.line_end = draw(st.sampled_from(["\n", "\n", "\r\n"]))
        self.final_newline = draw(st.booleans()) or self.line_end == "\r\n"
        self.draw = draw

    def scalar(self, value, flow: bool = False) -> str:
        if not isinstance(value, str):
            return json.dumps(value)
        quote = self.quote if self.quote != "mixed" else self.draw(st.sampled_from(["plain", "single", "double"]))
        plain_ok = bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9./ -]*", value)) and value.strip() == value
        try:
            plain_ok = plain_ok and yaml.safe_load(f"k: [{value}]" if flow else f"k: {value}") == {"k": [value] if flow else value}
        except yaml.YAMLError:
            plain_ok = False
        if quote == "plain" and plain_ok:
            return value
        if quote == "single":
            return "'" + value.replace("'", "''") + "'"
        return json.dumps(value)

    def comment(self) -> str:
        return "  # note" if self.comments and self.draw(st.booleans()) else ""


def emit_map(m: dict, col: int, s: Style, out: list[str], first_prefix: str | None = None) -> None:
    """Lines of mapping ``m`` at column ``col``; ``first_prefix`` replaces the first key's
    indentation (``- `` of a sequence item)."""
    for n, (k, v) in enumerate(m.items()):
        lead = first_prefix if (n == 0 and first_prefix is not None) else " " * col
        if s.comments and n > 0 and s.draw(st.integers(0, 4)) == 0:
            out.append(" " * col + "# about " + k)
        key = s.scalar(k) if ":" in k or "#" in k else k
        if isinstance(v, dict) and v:
            if s.flow_leaves and all(not isinstance(x, (dict, list)) for x in v.values()) and s.draw(st.booleans()):
                out.append(f"{lead}{key}: {{{', '.join(f'{a}: {s.scalar(b, True)}' for a, b in v.items())}}}")
                continue
            out.append(f"{lead}{key}:{s.comment()}")
            emit_map(v, col + s.indent, s, out)
        elif isinstance(v, list) and v:
            if s.flow_leaves and all(not isinstance(x, (dict, list)) for x in v) and s.draw(st.booleans()):
                out.append(f"{lead}{key}: [{', '.join(s.scalar(x, True) for x in v)}]")
                continue
            out.append(f"{lead}{key}:")
            for item in v:
                dash = " " * (col + s.offset) + "- "
                if isinstance(item, dict):
                    emit_map(item, col + s.offset + 2, s, out, first_prefix=dash)
                else:
                    out.append(dash + s.scalar(item) + s.comment())
        else:
            out.append(f"{lead}{key}: {s.scalar(v) if v not in ({}, []) else json.dumps(v)}{s.comment()}")


@st.composite
def objects(draw):
    """1 to 3 objects (ConfigMaps and Deployments) with distinct names."""
    out = []
    for i in range(draw(st.integers(1, 3))):
        name = f"obj{i}"
        labels = draw(st.dictionaries(LABEL_KEYS, WORDS, max_size=3))
        annotations = draw(st.dictionaries(st.sampled_from(["note", "example.com/why"]), TRICKY, max_size=2))
        meta = {"name": name, **({"labels": labels} if labels else {}),
                **({"annotations": annotations} if annotations else {})}
        if draw(st.booleans()):
            data = draw(st.dictionaries(st.sampled_from(["a", "b", "config.yaml", "c"]), TRICKY | WORDS,
                                        min_size=1, max_size=4))
            out.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})
        else:
            containers = [{"name": f"c{j}", "image": draw(WORDS),
                           **({"args": draw(st.lists(TRICKY | WORDS, min_size=1, max_size=3))} if draw(st.booleans()) else {}),
                           **({"env": [{"name": "E", "value": draw(TRICKY)}]} if draw(st.booleans()) else {})}
                          for j in range(draw(st.integers(1, 2)))]
            out.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                        "spec": {"replicas": draw(st.integers(0, 5)), "selector": {"matchLabels": {"app": name}},
                                 "template": {"metadata": {"labels": {"app": name}},
                                              "spec": {"containers": containers}}}})
    return out


def render(objs: list[dict], s: Style) -> str:
    lines = ["---"] if s.leading_marker else []
    if s.comments:
        lines.append("# people's notes on top")
    for n, obj in enumerate(objs):
        if n:
            lines.append("---")
        emit_map(obj, 0, s, lines)
    return s.line_end.join(lines) + (s.line_end if s.final_newline else "")


@st.composite
def cases(draw):
    objs = draw(objects())
    style = Style(draw)
    text = render(objs, style)
    target = draw(st.integers(0, len(objs) - 1))
    edit = draw(st.sampled_from(["set", "label-add", "label-remove", "annotate", "apply-same", "apply-changed"]))
    value = draw(WORDS)
    return objs, text, target, edit, value


def _ref(obj: dict) -> str:
    return ("configmap/" if obj["kind"] == "ConfigMap" else "deployment/") + obj["metadata"]["name"]


def _changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    removed = [ln[1:] for ln in diff[2:] if ln.startswith("-")]
    added = [ln[1:] for ln in diff[2:] if ln.startswith("+")]
    return removed, added


def _run(state: Path, *args: str) -> None:
    code = main_exit_code(["--state", str(state), *args])
    assert code == 0, args


def _edit(state: Path, obj: dict, edit: str, value: str, tmp: Path) -> tuple[dict, int, int]:
    """Run ``edit`` on ``obj``; returns (the expected object, most lines removed, most added)."""
    new = json.loads(json.dumps(obj))
    meta = new["metadata"]
    if edit == "set":
        if obj["kind"] == "ConfigMap":
            key = sorted(obj["data"])[0]
            if obj["data"][key] == value + "!":
                return new, 0, 0
            new["data"][key] = value + "!"
            _run(state, "patch", _ref(obj), "--type", "merge", "-p", json.dumps({"data": {key: value + "!"}}))
        else:
            new["spec"]["replicas"] = obj["spec"]["replicas"] + 1
            _run(state, "patch", _ref(obj), "--type", "merge", "-p", json.dumps({"spec": new["spec"]}))
        return new, 1, 1
    if edit == "label-add":
        had = bool(meta.get("labels")) and "added" not in meta["labels"]
        meta.setdefault("labels", {})["added"] = value
        _run(state, "label", _ref(obj), f"added={value}", "--overwrite")
        return new, 1, 1 if had else 2
    if edit == "label-remove":
        if not meta.get("labels"):
            return new, 0, 0
        key = sorted(meta["labels"])[0]
        del meta["labels"][key]
        if not meta["labels"]:
            del meta["labels"]
        _run(state, "label", _ref(obj), f"{key}-")
        return new, 2, 1  # the last label takes `labels:` with it; a flow mapping loses an entry
    if edit == "annotate":
        meta.setdefault("annotations", {})["note"] = "set by " + value
        _run(state, "annotate", _ref(obj), f"note=set by {value}", "--overwrite")
        return new, 1, 2
    if edit == "apply-changed":
        if obj["kind"] == "ConfigMap":
            new["data"]["added"] = value
        else:
            new["spec"]["replicas"] = obj["spec"]["replicas"] + 2
    (tmp / "in.json").write_text(json.dumps(new))
    _run(state, "apply", "-f", str(tmp / "in.json"))
    return new, (1 if edit == "apply-changed" else 0), (1 if edit == "apply-changed" else 0)


@settings(max_examples=int(os.environ.get("KARMACTL_FUZZ_EXAMPLES", "0")) or 20, deadline=None, phases=[Phase.explicit, Phase.generate],  # shrinking takes minutes
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_an_edit_changes_only_its_lines_in_every_style(case):
    objs, text, target, edit, value = case
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        path = state / "objects.yaml"
        path.write_bytes(text.encode())
        assert [d for d in yaml.safe_load_all(text) if d is not None] == objs  # the emitter wrote what it means
        mtime = path.stat().st_mtime_ns
        expected, most_removed, most_added = _edit(state, objs[target], edit, value, Path(tmp))
        after = path.read_bytes().decode()
        if "\r\n" in text:
            assert after.count("\r\n") == after.count("\n"), "the file's line ends were changed"
        removed, added = _changed_lines(text, after)
        assert len(removed) <= most_removed and len(added) <= most_added, (text, after)
        assert [d for d in yaml.safe_load_all(after) if d is not None] == \
            [expected if i == target else o for i, o in enumerate(objs)]
        if expected == objs[target]:
            assert after == text and path.stat().st_mtime_ns == mtime  # an unchanged object's file is not touched


FOUR_SPACES = """\
# the team's deployment; reviewed by ops
apiVersion: apps/v1
kind: Deployment
metadata:
    name: web
    labels: {app: web}
spec:
    replicas: 3     # three for now
    selector:
        matchLabels:
            app: web
    template:
        metadata:
            labels:
                app: web
        spec:
            containers:
                -   name: web
                    image: "nginx:1.25"
                    args: [ "--port", '8080' ]
"""


def _git_like_diff(before: str, after: str) -> list[str]:
    return [ln for ln in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def test_apply_of_one_changed_field_is_a_one_line_diff_and_keeps_quotes(cli, tmp_path):
    path = write(cli.state / "web.yaml", FOUR_SPACES)
    changed = FOUR_SPACES.replace('"nginx:1.25"', '"nginx:1.26"').replace("replicas: 3 ", "replicas: 6 ")
    write(tmp_path / "in.yaml", changed)
    assert cli.ok("apply", "-f", str(tmp_path / "in.yaml")) == "deployment.apps/web configured\n"
    assert _git_like_diff(FOUR_SPACES, path.read_text()) == [
        "-    replicas: 3     # three for now", "+    replicas: 6     # three for now",
        "-                    image: \"nginx:1.25\"", "+                    image: \"nginx:1.26\""]


def test_apply_of_an_unchanged_object_is_unchanged_and_leaves_the_file_alone(cli, tmp_path):
    path = write(cli.state / "web.yaml", FOUR_SPACES)
    mtime = path.stat().st_mtime_ns
    write(tmp_path / "in.yaml", FOUR_SPACES.replace("    labels: {app: web}", "    namespace: default\n    labels:\n      app: web"))
    assert cli.ok("apply", "-f", str(tmp_path / "in.yaml"), "--dry-run") == "deployment.apps/web unchanged (dry run)\n"
    assert cli.ok("apply", "-f", str(tmp_path / "in.yaml")) == "deployment.apps/web unchanged\n"
    assert path.read_text() == FOUR_SPACES and path.stat().st_mtime_ns == mtime


def test_new_objects_get_no_namespace_they_did_not_write_and_no_anchors(cli, tmp_path):
    out = cli.ok("create", "deployment", "web", "--image", "nginx", "--dry-run=client", "-o", "yaml")
    assert "&" not in out and "*" not in out and "namespace" not in out
    assert yaml.safe_load(out)["spec"]["selector"]["matchLabels"] == {"app": "web"}
    assert "namespace: team-a" in cli.ok("create", "deployment", "web", "-n", "team-a", "--image", "nginx",
                                         "--dry-run", "-o", "yaml")
    cli.ok("create", "deployment", "web", "--image", "nginx")
    stored = next(cli.state.rglob("web.yaml")).read_text()
    assert "namespace" not in stored and "&" not in stored
    assert "web" in cli.ok("get", "deploy", "web", "-n", "default", "-o", "name")


def test_cordon_and_suspend_add_only_their_lines_in_the_files_style(cli):
    cluster = write(cli.state / "member1.yaml", """\
        apiVersion: cluster.karmada.io/v1alpha1
        kind: Cluster
        metadata:
            name: member1
        spec:
            apiEndpoint: 'https://member1.example:6443'
            syncMode: Push
        """)
    before = cluster.read_text()
    cli.ok("cordon", "member1")
    diff = _git_like_diff(before, cluster.read_text())
    assert diff and all(ln.startswith("+") for ln in diff), diff
    assert "+    taints:" in diff
    pp = write(cli.state / "pp.yaml", """\
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata:
          name: web   # the web team's
        spec:
          resourceSelectors:
            - apiVersion: apps/v1
              kind: Deployment
              name: web
          placement:
            clusterAffinity:
              clusterNames:
                - member1
        """)
    before = pp.read_text()
    cli.ok("suspend", "pp", "web", "--clusters", "member1")
    diff = _git_like_diff(before, pp.read_text())
    assert diff and all(ln.startswith("+") for ln in diff), diff
    assert "+    dispatchingOnClusters:" in diff and "+        - member1" in diff


def test_edit_keeps_the_rest_of_a_multi_document_file(cli, tmp_path, monkeypatch):
    path = write(cli.state / "all.yaml", "---\n" + FOUR_SPACES + "---\n" + """\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: settings
        data:
          mode: 'fast'
        """)
    before = path.read_text()
    script = tmp_path / "editor.sh"
    script.write_text("#!/bin/sh\nsed -i 's/replicas: 3/replicas: 4/' \"$1\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("KUBE_EDITOR", str(script))
    assert cli.ok("edit", "deploy/web") == "deployment.apps/web edited\n"
    assert _git_like_diff(before, path.read_text()) == ["-    replicas: 3     # three for now",
                                                        "+    replicas: 4     # three for now"]


def test_removing_a_key_keeps_the_comment_on_the_next_one(cli):
    """ruamel attaches a whole-line comment to the entry above it: removing that entry must not take
    the comment about the next key with it."""
    path = write(cli.state / "cm.yaml", """\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: settings
          labels:
            team: web
        # about data: ask the web team first
        data:
          mode: fast
        """)
    before = path.read_text()
    cli.ok("label", "cm", "settings", "team-")
    assert _git_like_diff(before, path.read_text()) == ["-  labels:", "-    team: web"]


def test_delete_takes_only_the_objects_lines(cli):
    path = cli.state / "all.yaml"
    path.write_text("---\n" + FOUR_SPACES + "---\n# the settings\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                    "    name: settings\ndata: {mode: fast}\n")
    cli.ok("delete", "cm", "settings")
    assert path.read_text() == "---\n" + FOUR_SPACES
