"""``karmactl patch``: update fields of an object in the state directory with a strategic-merge, merge or
JSON patch (kubectl ``pkg/cmd/patch``), in the file it lives in."""
from __future__ import annotations

from contextlib import nullcontext
from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode
from karmactl.cli.objects import read_object, select_targets
from karmactl.cli.printers import print_one


def patch_cmd(c: Context, args: list[str], namespace: str, patch: Optional[str], patch_file: Optional[str],
              patch_type: str, dry_run: bool, output: Optional[str]) -> None:
    """kubectl's ``patch``: a strategic merge (default), JSON merge (RFC 7386) or JSON (RFC 6902) patch
    applied to the object in its file (comments on untouched fields kept), then validated as ``apply``
    validates. Patch semantics are the emulator's (:mod:`karmactl.emulator.patching`).

    Raises:
        CLIError: no or malformed patch, a patch that fails or changes the object's identity, an invalid
            result (exit 2); the object not found (exit 1).
    """
    from karmactl.cli.printers import kind_prefix
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import Source, StateStore

    if patch_type not in ("strategic", "merge", "json"):
        raise CLIError(f'--type must be one of [json merge strategic], not "{patch_type}"')
    if bool(patch) == bool(patch_file):
        raise CLIError("must specify exactly one of --patch (-p) or --patch-file")
    body = _patch_body(patch, patch_file)
    with state_lock(c.state) if not dry_run else nullcontext():
        store = StateStore(c.state)
        index = edit.index_user_objects(store)
        targets, missing = select_targets(store, index, args, namespace, False, None, False, "patched")
        for info, n in missing:
            raise CLIError(f'Error from server (NotFound): {info.resource_ref} "{n}" not found', ExitCode.NOT_FOUND)
        for info, key, src in targets:
            obj = read_object(store, src)
            new = _patched(obj, body, patch_type, f"{src.path}: {info.kind} {key[3]}")
            if (new.get("metadata") or {}).get("name") != key[3]:
                raise CLIError(f"{src.path}: {info.kind} {key[3]}: a patch cannot change apiVersion, kind, name or namespace")
            normalize_object(new, Source(src.path, src.index, src.line), store.registry, strict=True)  # validate; store as patched
            changed = new != obj
            if not dry_run and changed:
                edit.replace_object(store, src, new)
            print_one(c, info, new, output, f"{kind_prefix(info)}/{key[3]} patched{'' if changed else ' (no change)'}"
                                             f"{' (dry run)' if dry_run else ''}")


def _patch_body(patch: Optional[str], patch_file: Optional[str]):
    """The patch of ``-p`` or ``--patch-file``: one JSON or YAML map (a list for ``--type json``).

    Raises:
        CLIError: the file cannot be read, or the patch does not parse (exit 2).
    """
    from karmactl.store import yamlio

    text = patch
    if patch_file:
        try:
            with open(patch_file, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise CLIError(f"cannot read --patch-file {patch_file}: {exc.strerror}") from None
    try:
        docs = [d for d, _line in yamlio.load_all(text)]
    except Exception as exc:  # noqa: BLE001 - YAML and JSON errors alike
        raise CLIError(f"unable to parse the patch: {exc}") from None
    if len(docs) != 1 or not isinstance(docs[0], (dict, list)):
        raise CLIError("unable to parse the patch: expected one JSON or YAML map (a list for --type json)")
    return docs[0]


def _patched(obj: dict, body, patch_type: str, what: str) -> dict:
    """``obj`` with the patch ``body`` applied (``what`` names it in errors); its apiVersion, kind and
    namespace must stay (the caller checks the name).

    Raises:
        CLIError: the patch cannot be applied, or changes the object's identity (exit 2).
    """
    from karmactl.emulator.patching import PatchError, json_patch, merge_patch, strategic_merge

    try:
        if patch_type == "json":
            new = json_patch(obj, body)
        elif patch_type == "merge":
            new = merge_patch(obj, body)
        else:
            new = strategic_merge(obj, body)
    except PatchError as exc:
        raise CLIError(f"{what}: the patch cannot be applied: {exc}") from None
    if not isinstance(new, dict) or (new.get("apiVersion"), new.get("kind")) != (obj.get("apiVersion"), obj.get("kind")) \
            or ((new.get("metadata") or {}).get("namespace") or "") != ((obj.get("metadata") or {}).get("namespace") or ""):
        raise CLIError(f"{what}: a patch cannot change apiVersion, kind, name or namespace")
    return new

def register(app: typer.Typer) -> None:
    """Add ``patch`` to the app."""

    @app.command()
    def patch(ctx: typer.Context,
              args: List[str] = typer.Argument(..., metavar="TYPE NAME | TYPE/NAME"),
              namespace: str = typer.Option("default", "-n", "--namespace"),
              patch_text: Optional[str] = typer.Option(None, "-p", "--patch", help="The patch (JSON or YAML)."),
              patch_file: Optional[str] = typer.Option(None, "--patch-file", help="A file holding the patch."),
              patch_type: str = typer.Option("strategic", "--type", help="strategic, merge or json."),
              dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change."),
              output: Optional[str] = typer.Option(None, "-o", "--output", help="Print the patched object (yaml, json...).")):
        """Update fields of an object in the state directory with a patch (kubectl patch)."""
        patch_cmd(ctx.obj, args, namespace, patch_text, patch_file, patch_type, dry_run, output)
