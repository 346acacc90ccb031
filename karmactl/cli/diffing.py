"""Unified diffs of what a run would change, printed the way ``kubectl diff`` prints them.

``karmactl plan`` (alias ``diff``) shows one diff per changed object: the computed objects a run
would create, update or delete (ResourceBindings, Works, the status overlays of templates and
Clusters) and, online, the member copies it would create, update or delete. Each object is
rendered as YAML with its keys sorted (as kubectl renders both sides), so a diff shows what
changed and never an incidental reordering. Like kubectl (``staging/src/k8s.io/kubectl/pkg/cmd/
diff/diff.go``), an external program named by ``KARMACTL_EXTERNAL_DIFF`` may compare two
directories instead, one file per object named ``<group>.<version>.<Kind>.<namespace>.<name>``.

Secret values are never shown (:func:`mask_secrets`, kubectl diff's ``Masker``): every value of a
Secret's ``data`` and ``stringData``, on both sides, member copies and the Secrets inside Works
alike, becomes ``***``, or ``*** (before)`` / ``*** (after)`` where a key's value changes, so a
diff still shows which keys changed and never what they hold (a member's live Secret is not in
git; a plan's output is a CI log anyone reading the merge request sees).
"""
from __future__ import annotations

import difflib
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import orjson

from karmactl.api.names import cluster_of_execution_namespace
from karmactl.cli.context import CLIError, ExitCode
from karmactl.store import yamlio
from karmactl.store.state import COMPUTED_KINDS, InputError, StateStore, dump_computed, key_of

EXTERNAL_DIFF_ENV = "KARMACTL_EXTERNAL_DIFF"

# What the API server sets on a member copy; none of it is something a run applies, so showing
# it would bury the change in noise (kubectl diff compares two server-side renderings instead).
SERVER_METADATA_FIELDS = ("managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink")

MEMBER_ACTIONS = ("create", "update", "delete")

# What karmactl and the API server keep to know where they are, which a reviewer does not review:
# generations and versions move with every change, times with every observation, and the managed
# annotations repeat what the object shows. ``plan --show-managed`` keeps them.
BOOKKEEPING_METADATA = ("generation", "resourceVersion", "managedFields", "creationTimestamp", "selfLink")
BOOKKEEPING_ANNOTATIONS = frozenset((
    "karmactl.io/observed-at", "karmactl.io/applied-version", "policy.karmada.io/applied-overrides",
    "policy.karmada.io/applied-cluster-overrides", "resourcetemplate.karmada.io/generation",
    "resourcetemplate.karmada.io/managed-annotations", "resourcetemplate.karmada.io/managed-labels",
    "resourcetemplate.karmada.io/uid"))
BOOKKEEPING_STATUS = frozenset((
    "generation", "observedGeneration", "resourceTemplateGeneration", "schedulerObservedGeneration",
    "lastScheduledTime", "lastTransitionTime", "lastHeartbeatTime", "lastUpdateTime", "lastProbeTime"))

SENSITIVE_MASK = "***"
SENSITIVE_MASK_BEFORE = "*** (before)"
SENSITIVE_MASK_AFTER = "*** (after)"
SECRET_FIELDS = ("data", "stringData")


@dataclass(frozen=True)
class ObjectDiff:
    """One changed object, both sides as plain JSON data (what a computed file holds).

    Attributes:
        name: kubectl diff's file name of the object, ``apps.v1.Deployment.default.nginx``;
            member copies are prefixed with their cluster, ``member1.apps.v1.Deployment.default.nginx``.
        from_label / to_label: the ``---`` / ``+++`` header names.
        old / new: the object before and after, None where it does not exist (``diff -N``).
        action: ``create``, ``update`` or ``delete``.
        scope: ``computed`` (a ResourceBinding or Work), ``status`` (the status overlay of a
            template, Cluster or policy) or ``member`` (a member cluster's copy).
        path: the computed file, relative to the state directory (``""`` for member copies).
        cluster: the member cluster of a member copy, or of a Work (by its execution namespace);
            ``""`` otherwise.
    """

    name: str
    from_label: str
    to_label: str
    old: dict | None
    new: dict | None
    action: str = "update"
    scope: str = "computed"
    path: str = ""
    cluster: str = ""

    def ref(self) -> tuple[str, str, str, str]:
        """``(apiVersion, kind, namespace, name)`` of the object (from whichever side exists)."""
        obj = self.new if self.new is not None else self.old or {}
        md = obj.get("metadata") or {}
        return obj.get("apiVersion", ""), obj.get("kind", ""), md.get("namespace") or "", md.get("name") or ""

    def without_bookkeeping(self) -> ObjectDiff:
        """This diff with :func:`without_bookkeeping` applied to both sides."""
        return replace(self, old=without_bookkeeping(self.old), new=without_bookkeeping(self.new))

    def differs(self) -> bool:
        """Whether the two sides render differently (without rendering them)."""
        return _canonical(self.old) != _canonical(self.new)

    def texts(self) -> tuple[str, str]:
        """Both sides as YAML (:func:`object_yaml`), ``""`` for a missing side."""
        return object_yaml(self.old), object_yaml(self.new)

    def unified(self) -> list[str]:
        """The unified diff (3 lines of context), one string per line without newlines; empty
        when both sides render the same."""
        if not self.differs():
            return []
        old, new = self.texts()
        return list(difflib.unified_diff(old.splitlines(), new.splitlines(), self.from_label, self.to_label,
                                         lineterm=""))


def _canonical(obj: dict | None) -> bytes:
    return b"" if obj is None else orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


# ---------------------------------------------------------------------------- masking Secrets
def _is_secret(obj) -> bool:
    return isinstance(obj, dict) and obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1"


def _mask_values(before: dict | None, after: dict | None) -> tuple[dict | None, dict | None]:
    """kubectl's ``Masker.run`` on one map field: every value masked; a key on both sides with
    different values gets the before/after masks."""
    old = {k: SENSITIVE_MASK for k in before} if isinstance(before, dict) else before
    new = {k: SENSITIVE_MASK for k in after} if isinstance(after, dict) else after
    if isinstance(before, dict) and isinstance(after, dict):
        for k in before.keys() & after.keys():
            if before[k] != after[k]:
                old[k], new[k] = SENSITIVE_MASK_BEFORE, SENSITIVE_MASK_AFTER
    return old, new


def _mask_secret(old: dict | None, new: dict | None) -> tuple[dict | None, dict | None]:
    old = dict(old) if isinstance(old, dict) else old
    new = dict(new) if isinstance(new, dict) else new
    for key in SECRET_FIELDS:
        a = old.get(key) if isinstance(old, dict) else None
        b = new.get(key) if isinstance(new, dict) else None
        ma, mb = _mask_values(a, b)
        if isinstance(old, dict) and key in old:
            old[key] = ma
        if isinstance(new, dict) and key in new:
            new[key] = mb
    return old, new


def _manifest_key(m) -> tuple:
    md = (m.get("metadata") or {}) if isinstance(m, dict) else {}
    return (m.get("apiVersion"), m.get("kind"), md.get("namespace"), md.get("name")) if isinstance(m, dict) else ()


def _mask_work(old: dict | None, new: dict | None) -> tuple[dict | None, dict | None]:
    """A Work's Secret manifests masked, each paired with the manifest of the same object on the other side."""

    def manifests(work):
        w = ((work or {}).get("spec") or {}).get("workload") if isinstance(work, dict) else None
        return (w or {}).get("manifests") if isinstance(w, dict) else None

    mo, mn = manifests(old), manifests(new)
    if not any(_is_secret(m) for m in (mo or []) + (mn or [])):
        return old, new
    by_key_old = {_manifest_key(m): m for m in mo or [] if _is_secret(m)}
    by_key_new = {_manifest_key(m): m for m in mn or [] if _is_secret(m)}

    def rebuilt(work, items, mine, other, first):
        if items is None:
            return work
        out = []
        for m in items:
            if _is_secret(m):
                pair = (m, other.get(_manifest_key(m))) if first else (other.get(_manifest_key(m)), m)
                m = _mask_secret(*pair)[0 if first else 1]
            out.append(m)
        spec = dict(work["spec"])
        spec["workload"] = dict(spec["workload"], manifests=out)
        return dict(work, spec=spec)

    return (rebuilt(old, mo, by_key_old, by_key_new, True), rebuilt(new, mn, by_key_new, by_key_old, False))


def mask_secrets(old: dict | None, new: dict | None) -> tuple[dict | None, dict | None]:
    """Both sides of a diff with Secret values masked as ``kubectl diff`` masks them
    (``staging/src/k8s.io/kubectl/pkg/cmd/diff/diff.go``, ``Masker``), extended to ``stringData``
    and to the Secret manifests of Works. Other objects are returned as they are; the inputs are
    never modified."""
    if _is_secret(old) or _is_secret(new):
        return _mask_secret(old, new)
    kinds = {(o or {}).get("kind") for o in (old, new) if isinstance(o, dict)}
    if "Work" in kinds:
        return _mask_work(old, new)
    return old, new


# ---------------------------------------------------------------------------- rendering objects
def object_yaml(obj: dict | None) -> str:
    """``obj`` (plain JSON data) as block YAML with keys sorted at every level; ``""`` for None."""
    return "" if obj is None else yamlio.dump(obj, sort_keys=True)


def as_json_data(obj: dict | None) -> dict | None:
    """``obj`` as its computed file holds it (through JSON: tuples become lists, and so on)."""
    return None if obj is None else orjson.loads(dump_computed(obj))


def without_server_fields(obj: dict | None) -> dict | None:
    """A member copy without what the API server sets: ``status`` and the metadata fields in
    :data:`SERVER_METADATA_FIELDS`. ``obj`` is not modified."""
    if obj is None:
        return None
    shown = {k: v for k, v in obj.items() if k != "status"}
    if isinstance(shown.get("metadata"), dict):
        shown["metadata"] = {k: v for k, v in shown["metadata"].items() if k not in SERVER_METADATA_FIELDS}
    return shown


def without_bookkeeping(obj: dict | None) -> dict | None:
    """``obj`` without what only records where the control plane is (``obj`` is not modified):
    karmactl's private ``observed`` section, the metadata fields of :data:`BOOKKEEPING_METADATA`
    and annotations of :data:`BOOKKEEPING_ANNOTATIONS`, a binding's ``spec.resource.resourceVersion``,
    and in ``status`` (at any depth) the generations and times of :data:`BOOKKEEPING_STATUS`. The
    manifests of a Work are cleaned the same way.
    """
    if not isinstance(obj, dict):
        return obj
    shown = {k: v for k, v in obj.items() if k != "observed"}
    md = shown.get("metadata")
    if isinstance(md, dict):
        md = {k: v for k, v in md.items() if k not in BOOKKEEPING_METADATA}
        if isinstance(md.get("annotations"), dict):
            md["annotations"] = {k: v for k, v in md["annotations"].items() if k not in BOOKKEEPING_ANNOTATIONS}
            if not md["annotations"]:
                del md["annotations"]
        shown["metadata"] = md
    if "status" in shown:
        shown["status"] = _without_status_bookkeeping(shown["status"])
    spec = shown.get("spec")
    if isinstance(spec, dict):
        resource = spec.get("resource")
        if isinstance(resource, dict) and "resourceVersion" in resource:
            spec = dict(spec, resource={k: v for k, v in resource.items() if k != "resourceVersion"})
        workload = spec.get("workload")
        if isinstance(workload, dict) and isinstance(workload.get("manifests"), list):
            spec = dict(spec, workload=dict(workload, manifests=[without_bookkeeping(m) for m in workload["manifests"]]))
        shown["spec"] = spec
    return shown


def _without_status_bookkeeping(value):
    if isinstance(value, dict):
        return {k: _without_status_bookkeeping(v) for k, v in value.items() if k not in BOOKKEEPING_STATUS}
    if isinstance(value, list):
        return [_without_status_bookkeeping(v) for v in value]
    return value


def object_label(api_version: str, kind: str, namespace: str, name: str) -> str:
    """``apps/v1, Kind=Deployment default/nginx`` (cluster-scoped: ``..., Kind=Cluster member1``)."""
    return f"{api_version}, Kind={kind} {namespace + '/' if namespace else ''}{name}"


def object_file_name(api_version: str, kind: str, namespace: str, name: str) -> str:
    """kubectl diff's file name of an object: ``apps.v1.Deployment.default.nginx``."""
    return f"{api_version}.{kind}.{namespace}.{name}".replace("/", ".")


# ---------------------------------------------------------------------------- what to diff
def computed_diffs(store: StateStore, report, before=None) -> list[ObjectDiff]:
    """The diffs of a run's computed changes, in ``report.changes`` order.

    Args:
        store: the state directory the run read.
        report: a :class:`~karmactl.reconcile.RunReport` (``changes`` as ``[(action,
            relative_path)]``; the new side from ``after``, or ``partial_after`` for a partial run).
        before: the snapshot the run started from (``report.before`` of a run that wrote), or
            None for a dry run: the current side is then read from the ``computed/`` files.

    Returns:
        One :class:`ObjectDiff` per change of a computed object (Event files are not objects and
        have none), Secret values masked (:func:`mask_secrets`); the header of a status overlay
        (the computed metadata and status of a template or Cluster) ends with ``(status)``.

    Raises:
        InputError: a computed file that cannot be read any more (naming it).
        ValueError: neither ``report.after`` nor ``report.partial_after`` is there (large offline
            runs leave both out).
    """
    if not report.changes:
        return []
    after = report.after if report.after is not None else getattr(report, "partial_after", None)
    if after is None:
        raise ValueError("a run's report carries the computed snapshot")
    wanted = {rel for _action, rel in report.changes}
    planned: dict[str, dict] = {}
    current: dict[str, dict] = {}
    for which in ("bindings", "works", "overlays"):
        for snap, into in ((after, planned), (before, current)):
            for key, obj in (getattr(snap, which).items() if snap is not None else ()):
                rel = store.computed_rel(key)
                if rel in wanted:
                    into[rel] = obj
    diffs = []
    for action, rel in report.changes:
        new = planned.get(rel)
        if before is None:
            old = None if action == "create" else _read_computed(store, rel)
        else:
            old = current.get(rel) if action != "create" else None
        shown = new if new is not None else old
        if shown is None:
            continue  # an Event file
        group, kind, namespace, name = key_of(shown)
        api_version = shown.get("apiVersion", "")
        label = object_label(api_version, kind, namespace, name)
        scope = "computed" if (group, kind) in COMPUTED_KINDS else "status"
        if scope == "status":
            label += " (status)"
        cluster = (cluster_of_execution_namespace(namespace) or "") if kind == "Work" else ""
        diffs.append(ObjectDiff(object_file_name(api_version, kind, namespace, name),
                                f"a/{label}", f"b/{label}", *mask_secrets(as_json_data(old), as_json_data(new)),
                                action=action, scope=scope, path=rel, cluster=cluster))
    return diffs


def _read_computed(store: StateStore, rel: str) -> dict:
    try:
        return orjson.loads((store.root / rel).read_bytes())
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read computed file (delete it to recompute): {exc}", rel) from None


def member_diffs(member_changes: list) -> list[ObjectDiff]:
    """The diffs of member copies an online dry run would change, sorted by cluster and ref.

    Args:
        member_changes: ``RunReport.member_changes``, ``[{"cluster", "action", "ref",
            "current", "desired"}]`` (see :class:`~karmactl.reconcile.RunReport`). Server-set
            fields (:func:`without_server_fields`) are left out of both sides.

    Returns:
        One :class:`ObjectDiff` per entry, headed ``member1/apps/v1, Kind=Deployment default/nginx``,
        Secret values masked (:func:`mask_secrets`).

    Raises:
        ValueError: an entry without a cluster, with an unknown action, a ref that is not
            ``Kind [namespace/]name``, or no object on the side its action needs.
    """
    diffs = []
    for change in sorted(member_changes, key=lambda c: (str(c.get("cluster")), str(c.get("ref")))):
        cluster, action, ref = change.get("cluster"), change.get("action"), change.get("ref")
        current, desired = change.get("current"), change.get("desired")
        kind, _, qualified = (ref or "").partition(" ")
        namespace, _, name = qualified.rpartition("/")
        if not cluster or action not in MEMBER_ACTIONS or not kind or not name:
            raise ValueError(f"malformed member change {cluster!r} {action!r} {ref!r}")
        if (action != "create" and current is None) or (action != "delete" and desired is None):
            raise ValueError(f"member change {action} {ref} on {cluster} lacks the object it needs")
        api_version = (desired or current).get("apiVersion", "")
        label = f"{cluster}/{object_label(api_version, kind, namespace, name)}"
        diffs.append(ObjectDiff(f"{cluster}.{object_file_name(api_version, kind, namespace, name)}", label, label,
                                *mask_secrets(as_json_data(without_server_fields(current) if action != "create" else None),
                                              as_json_data(without_server_fields(desired) if action != "delete" else None)),
                                action=action, scope="member", cluster=cluster))
    return diffs


# ---------------------------------------------------------------------------- output
def print_unified(diffs: list[ObjectDiff], colour: bool) -> bool:
    """Print every non-empty diff to stdout as it is rendered; returns whether any was printed.

    Args:
        colour: colour the lines with rich (for terminals): headers bold, hunk headers cyan,
            removals red, additions green.
    """
    console = None
    if colour:
        from rich.console import Console
        from rich.text import Text

        console = Console(file=sys.stdout, highlight=False, soft_wrap=True)
    printed = False
    for d in diffs:
        lines = d.unified()
        if not lines:
            continue
        printed = True
        if console is None:
            sys.stdout.write("\n".join(lines) + "\n")
            continue
        for i, line in enumerate(lines):
            style = ("bold" if i < 2 else "cyan" if line.startswith("@@") else
                     "red" if line.startswith("-") else "green" if line.startswith("+") else "")
            console.print(Text(line, style=style))
    return printed


def run_external(command: str, diffs: list[ObjectDiff]) -> bool:
    """Compare with an external program, as ``KUBECTL_EXTERNAL_DIFF`` does for kubectl.

    Every object is written to two directories, ``LIVE`` (as it is) and ``MERGED`` (as the
    run would leave it), under the file name :attr:`ObjectDiff.name`; an object missing on one
    side has no file there. The program runs as ``<command...> LIVE MERGED``; its output is
    passed through.

    Returns:
        Whether the program found differences (exit status 1; 0 means none).

    Raises:
        CLIError: the command cannot be parsed or started, or it exited with another status
            (exit code 2, as ``diff`` uses for trouble).
    """
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise CLIError(f"{EXTERNAL_DIFF_ENV}: {exc}") from None
    if not argv:
        raise CLIError(f"{EXTERNAL_DIFF_ENV} is set but names no program")
    with tempfile.TemporaryDirectory(prefix="karmactl-diff-") as tmp:
        live, merged = Path(tmp, "LIVE"), Path(tmp, "MERGED")
        live.mkdir()
        merged.mkdir()
        for d in diffs:
            old, new = d.texts()
            if old:
                (live / d.name).write_text(old, encoding="utf-8")
            if new:
                (merged / d.name).write_text(new, encoding="utf-8")
        try:
            proc = subprocess.run([*argv, str(live), str(merged)], capture_output=True, text=True)
        except OSError as exc:
            raise CLIError(f"{EXTERNAL_DIFF_ENV}: cannot run {argv[0]}: {exc.strerror or exc}") from None
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if proc.returncode > 1 or proc.returncode < 0:
        raise CLIError(f"{EXTERNAL_DIFF_ENV}: {argv[0]} exited with status {proc.returncode}", ExitCode.INPUT_ERROR)
    return proc.returncode == 1
