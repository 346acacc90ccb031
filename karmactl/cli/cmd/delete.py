"""``karmactl delete``: remove objects from their files (the next reconcile removes what they propagated)."""
from __future__ import annotations

from contextlib import nullcontext
from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.inputs import read_inputs
from karmactl.cli.objects import not_found, select_targets
from karmactl.cli.stores import store_of
from karmactl.store.fsio import state_lock
from karmactl.store.state import check_object, key_of

DELETION_PROTECTION_WEBHOOK = "resourcedeletionprotection.karmada.io"


def protection_denial(obj: dict) -> str | None:
    """Karmada's ResourceDeletionProtection webhook (``pkg/webhook/resourcedeletionprotection/
    validating.go``): the API server's answer to deleting an object labelled
    ``resourcetemplate.karmada.io/deletion-protected: Always``, or None when it may go."""
    from karmactl.api.constants import DELETION_PROTECTED_LABEL

    labels = (obj.get("metadata") or {}).get("labels") or {}
    if labels.get(DELETION_PROTECTED_LABEL) != "Always":
        return None
    return (f'admission webhook "{DELETION_PROTECTION_WEBHOOK}" denied the request: This resource is protected, '
            f"please make sure to remove the label: {DELETION_PROTECTED_LABEL}")


def _protected(store, targets: list) -> tuple[list, list]:
    """``(deletable targets, [(info, key, denial)])`` as the webhook sorts them."""
    keep, denied, docs = [], [], {}
    for info, key, src in targets:
        if src.path not in docs:
            docs[src.path] = {i: obj for obj, i, _line in store.read_documents(store.root / src.path, src.path)}
        denial = protection_denial(docs[src.path].get(src.index) or {})
        (denied.append((info, key, denial)) if denial else keep.append((info, key, src)))
    return keep, denied


def delete_cmd(c: Context, resources: list[str], files: list[str], namespace: str, ignore_not_found: bool,
               selector: str | None = None, all_objects: bool = False, all_namespaces: bool = False,
               dry_run: bool = False) -> None:
    """``karmactl delete``: remove objects from their files (the next reconcile removes what they propagated).

    Objects by ``TYPE NAME...``, ``TYPE/NAME...``, ``-f FILE``, ``TYPE -l SELECTOR`` or ``TYPE --all``
    (``-A``: every namespace); ``--dry-run`` prints what would go and writes nothing (kubectl ``delete``).

    An object labelled ``resourcetemplate.karmada.io/deletion-protected: Always`` stays, with the
    denial of Karmada's ResourceDeletionProtection webhook (exit 2); the others named go.

    Raises:
        CLIError: bad arguments (exit 2); objects not found (exit 1) unless ``--ignore-not-found``.
    """
    from karmactl.cli.printers import kind_prefix
    from karmactl.store import edit

    store = store_of(c)
    with state_lock(store.root) if not dry_run else nullcontext():
        index = edit.index_user_objects(store)
        if files:
            if resources or selector or all_objects:
                raise CLIError("cannot mix -f with resource arguments, -l or --all")
            targets, missing = [], []
            for obj, display, _i, line in read_inputs(files, True):
                info = check_object(obj, store.registry, display, line)
                key = key_of(obj)
                (targets.append((info, key, index[key])) if key in index else missing.append((info, key[3])))
        elif resources:
            targets, missing = select_targets(store, index, resources, namespace, all_objects, selector,
                                              all_namespaces, "deleted")
        else:
            raise CLIError("you must provide one or more resources by argument or filename (TYPE NAME, TYPE/NAME, "
                           "TYPE -l SELECTOR, TYPE --all or -f FILE)")
        if not targets and not missing and not files:
            err(f"No resources found in {namespace} namespace." if not all_namespaces else "No resources found")
        targets, denied = _protected(store, targets)
        # delete from the highest document index first so indexes of the rest stay valid
        for info, key, src in sorted(targets, key=lambda t: (t[2].path, -t[2].index)):
            if not dry_run:
                edit.remove_object(store, src)
                edit.remove_overlay(store, key)
        for info, key, _src in targets:
            out(f'{kind_prefix(info)} "{key[3]}" deleted{" (dry run)" if dry_run else ""}')
    # the objects found are deleted (the lock's batch is committed) even when others were not found
    for info, key, denial in denied:
        err(f'Error from server (Forbidden): error when deleting {kind_prefix(info)} "{key[3]}": {denial}')
    if denied:
        raise SystemExit(int(ExitCode.INPUT_ERROR))
    if missing and not ignore_not_found:
        for info, name in missing:
            err(not_found(info, name).args[0])
        raise SystemExit(int(ExitCode.NOT_FOUND))


def register(app: typer.Typer) -> None:
    """Add ``delete`` to the app."""

    @app.command()
    def delete(ctx: typer.Context,
               resources: Optional[List[str]] = typer.Argument(None, metavar="TYPE [NAME...] | TYPE/NAME...",
                                                               help="Resource type and names (deploy nginx, pp/web...)."),
               filename: Optional[List[str]] = typer.Option(None, "-f", "--filename", help="Delete the objects in these files."),
               namespace: str = typer.Option("default", "-n", "--namespace"),
               selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Delete the objects matching a label selector."),
               all_objects: bool = typer.Option(False, "--all", help="Delete every object of the type (in the namespace)."),
               all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="With -l or --all: every namespace."),
               ignore_not_found: bool = typer.Option(False, "--ignore-not-found"),
               dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would be deleted.")):
        """Remove objects from the state directory (the next reconcile removes what they propagated)."""
        delete_cmd(ctx.obj, resources or [], filename or [], namespace, ignore_not_found, selector, all_objects,
                   all_namespaces, dry_run)
