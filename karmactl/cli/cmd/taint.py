"""``karmactl taint``: cluster taints as karmadactl sets them (semantics §11.2).

Follows ``pkg/karmadactl/taint/taint.go`` and
``pkg/util/lifted/taint.go`` (kubectl's taint parsing). The command edits ``spec.taints`` of the
Cluster in **its own user file**, in place (comments and layout kept, ``karmactl/store/edit.py``):
user taints stay apart from the taints the cluster controller manages in the Cluster's overlay
(``karmactl/controllers/cluster_taints.py``), so ``taint ...-`` never removes a controller taint.
Added NoExecute taints get ``timeAdded`` = the command's clock, as the API server stamps them.
"""
from __future__ import annotations

import re
from typing import List

import typer

from karmactl.api import constants as C
from karmactl.cli.clusters import edit_cluster_taints
from karmactl.cli.context import CLIError, out

MODIFIED, TAINTED, UNTAINTED = "modified", "tainted", "untainted"
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_CLUSTER_EFFECTS = (C.EFFECT_NO_SCHEDULE, C.EFFECT_NO_EXECUTE)
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_QUALIFIED = re.compile(rf"(([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_NAME}")
_VALUE = re.compile(rf"({_NAME})?")


def _taint_string(t: dict) -> str:
    head = f"{t['key']}={t['value']}" if t.get("value") else t["key"]
    return f"{head}:{t['effect']}" if t.get("effect") else head


def parse_taint(spec: str) -> dict:
    """``key=value:effect``, ``key:effect`` or ``key`` -> ``{key, value?, effect?}`` (kubectl ``parseTaint``).

    Raises:
        CLIError: kubectl's messages (``invalid taint spec: ...``, ``invalid taint effect: ...``).
    """
    parts = spec.split(":")
    value = effect = ""
    if len(parts) == 1:
        key = parts[0]
    elif len(parts) == 2:
        effect = parts[1]
        if effect not in _EFFECTS:
            raise CLIError(f"invalid taint effect: {effect}, unsupported taint effect")
        kv = parts[0].split("=")
        if len(kv) > 2:
            raise CLIError(f"invalid taint spec: {spec}")
        key = kv[0]
        if len(kv) == 2:
            value = kv[1]
            if len(value) > 63 or not _VALUE.fullmatch(value):
                raise CLIError(f"invalid taint spec: {spec}, a valid label value must be 63 characters or less "
                               "and must be empty or begin and end with an alphanumeric character")
    else:
        raise CLIError(f"invalid taint spec: {spec}")
    if not key or not _QUALIFIED.fullmatch(key) or len(key.rpartition("/")[2]) > 63:
        raise CLIError(f"invalid taint spec: {spec}, a qualified name must consist of alphanumeric characters, "
                       "'-', '_' or '.', and must start and end with an alphanumeric character")
    taint = {"key": key}
    if value:
        taint["value"] = value
    if effect:
        taint["effect"] = effect
    return taint


def parse_taint_args(args: list[str]) -> tuple[list[str], list[dict], list[dict]]:
    """``(resources, taints to add, taints to remove)`` from the positional arguments (``parseTaintArgs``
    + ``ParseTaints``).

    Raises:
        CLIError: resources after taints, a taint to add without effect, duplicates by key+effect.
    """
    resources: list[str] = []
    specs: list[str] = []
    for a in args:
        is_taint = "=" in a or ":" in a or a.endswith("-")
        if is_taint:
            specs.append(a)
        elif specs:
            raise CLIError(f"all resources must be specified before taint changes: {a}")
        else:
            resources.append(a)
    add, remove = [], []
    for s in specs:
        if s.endswith("-"):
            t = parse_taint(s[:-1])
            remove.append({k: v for k, v in t.items() if k != "value"})
            continue
        t = parse_taint(s)
        if not t.get("effect"):
            raise CLIError(f"invalid taint spec: {s}")
        if any(o["key"] == t["key"] and o["effect"] == t["effect"] for o in add):
            raise CLIError(f"duplicated taints with the same key and effect: {_taint_string(t)}")
        add.append(t)
    return resources, add, remove


def update_taints(name: str, taints: list[dict], add: list[dict], remove: list[dict], overwrite: bool,
                  now: str) -> tuple[str, list[dict]]:
    """``(operation, new taints)`` as karmadactl's ``updateTaints``/``reorganizeTaints``.

    Raises:
        CLIError: an existing key+effect without ``--overwrite``; a taint to remove that is not there.
    """
    if not overwrite:
        exists = [t["key"] for t in add for o in taints if o.get("key") == t["key"] and o.get("effect") == t["effect"]]
        if exists:
            raise CLIError(f"cluster {name} already has {','.join(exists)} taint(s) with same effect(s) "
                           "and --overwrite is false")
    stamped = [dict(t, timeAdded=now) if t["effect"] == C.EFFECT_NO_EXECUTE else dict(t) for t in add]
    new = list(stamped)
    for old in taints:
        if not any(old.get("key") == t["key"] and old.get("effect") == t["effect"] for t in new):
            new.append(old)
    added = len(taints) != len(new)
    errors, deleted = [], False
    for r in remove:
        kept = [t for t in new if not (t.get("key") == r["key"] and (not r.get("effect") or t.get("effect") == r["effect"]))]
        deleted = len(kept) != len(new)
        if not deleted:
            errors.append(f'taint "{_taint_string(r)}" not found')
        new = kept
    if errors:
        raise CLIError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    if (added and deleted) or overwrite:
        return MODIFIED, new
    return (TAINTED if added else UNTAINTED), new


def taint_cmd(c, args: list[str], overwrite: bool, dry_run: bool) -> None:
    """``karmactl taint clusters NAME... KEY[=VAL]:EFFECT ... | KEY[:EFFECT]-``."""
    resources, add, remove = parse_taint_args(args)
    if not resources:
        raise CLIError("one or more resources must be specified as <resource> <name>")
    if not add and not remove:
        raise CLIError("at least one taint update is required")
    if resources[0].lower() not in ("cluster", "clusters"):
        raise CLIError(f'invalid resource type {resources[0]}, only ["cluster" "clusters"] are supported')
    conflicts = [f'{{"{r["key"]}":"{r.get("effect", "")}"}}' for a in add for r in remove
                 if a["key"] == r["key"] and (not r.get("effect") or a["effect"] == r["effect"])]
    if conflicts:
        raise CLIError(f"can not both modify and remove the following taint(s) in the same command: {', '.join(conflicts)}")
    if len(resources) < 2:
        raise CLIError("at least one resource name must be specified")
    for t in add:
        if t["effect"] not in _CLUSTER_EFFECTS:  # the Cluster API only accepts these two
            raise CLIError(f'Cluster.cluster.karmada.io "{resources[1]}" is invalid: spec.taints.effect: '
                           f'Unsupported value: "{t["effect"]}": supported values: "NoSchedule", "NoExecute"')
    for name in resources[1:]:
        def change(cname, taints):
            op, new = update_taints(cname, taints, add, remove, overwrite, c.now)
            return f"cluster/{cname} {op}", (None if dry_run else new)
        out(edit_cluster_taints(c, name, change))


def register(app: typer.Typer) -> None:
    """Add ``taint`` to the app."""

    @app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def taint(ctx: typer.Context,
              args: List[str] = typer.Argument(..., metavar="clusters NAME KEY[=VAL]:EFFECT ... | KEY[:EFFECT]-"),
              overwrite: bool = typer.Option(False, "--overwrite", help="Allow taints to be overwritten."),
              dry_run: bool = typer.Option(False, "--dry-run", help="Print what would change; write nothing.")):
        """Update the taints on one or more clusters (karmadactl taint), in the Cluster's own file."""
        taint_cmd(ctx.obj, list(args) + list(ctx.args), overwrite, dry_run)
