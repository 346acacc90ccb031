"""``karmactl label`` and ``annotate`` (kubectl ``pkg/cmd/{label,annotate}``).

They edit the object in the file it lives in (comments and layout kept, through
:func:`karmactl.store.edit.edit_object`); the next ``reconcile`` propagates the change. Computed kinds
(ResourceBinding, ClusterResourceBinding, Work) are refused: ``reconcile`` rewrites them.
"""
from __future__ import annotations

from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.objects import read_object, select_targets


def parse_changes(args: list[str], what: str) -> tuple[dict, list[str]]:
    """``k=v`` and ``k-`` arguments -> ``({key: value}, [keys to remove])`` (kubectl's ``parseLabels``).

    Raises:
        CLIError: an argument that is neither, a key given twice, or (labels) an invalid key or value.
    """
    from karmactl.cli.selectors import check_label_key, check_label_value

    sets, removes = {}, []
    for a in args:
        if a.endswith("-") and "=" not in a:
            removes.append(a[:-1])
            if what == "label":
                check_label_key(a[:-1])
        elif "=" in a:
            k, v = a.split("=", 1)
            if k in sets:
                raise CLIError(f"cannot modify {what} {k} more than once in one command")
            if what == "label":
                check_label_key(k)
                check_label_value(v)
            elif not k:
                raise CLIError(f'invalid annotation spec "{a}": the key is empty')
            sets[k] = v
        else:
            raise CLIError(f'invalid {what} spec "{a}": expected KEY=VALUE or KEY-')
    overlap = set(sets) & set(removes)
    if overlap:
        raise CLIError(f"can not both modify and remove the following {what}(s) in the same command: "
                       + ", ".join(sorted(overlap)))
    return sets, removes


def meta_cmd(c: Context, what: str, args: list[str], namespace: str, overwrite: bool, all_objects: bool,
             selector: Optional[str], dry_run: bool, all_namespaces: bool = False) -> None:
    """``label`` / ``annotate`` (``what`` = ``label`` | ``annotation``): set ``k=v`` and remove ``k-`` on the
    chosen objects in their files; kubectl's messages (``deployment.apps/nginx labeled``).

    Raises:
        CLIError: bad arguments; a key that has another value without ``--overwrite`` (exit 2); objects
            not found (exit 1, after the others are changed).
    """
    from karmactl.cli.printers import kind_prefix
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import StateStore

    # changes start at the first KEY=VALUE or KEY- (object names never end with "-")
    split = next((i for i, a in enumerate(args) if i > 0 and ("=" in a or a.endswith("-"))), len(args))
    resources, changes = args[:split], args[split:]
    if not changes:
        raise CLIError(f"at least one {what} update is required")
    sets, removes = parse_changes(changes, what)
    field = "labels" if what == "label" else "annotations"
    with state_lock(c.state):
        store = StateStore(c.state)
        index = edit.index_user_objects(store)
        targets, missing = select_targets(store, index, resources, namespace, all_objects, selector, all_namespaces,
                                          "labeled" if what == "label" else "annotated")
        for info, key, src in targets:
            current = (read_object(store, src).get("metadata") or {}).get(field) or {}
            if not overwrite:
                for k, v in sets.items():
                    if k in current and str(current[k]) != v:
                        raise CLIError(f"'{k}' already has a value ({current[k]}), and --overwrite is false")

            def mutate(node):
                meta = node.setdefault("metadata", {})
                data = meta.get(field)
                if data is None:
                    data = meta[field] = {}
                for k in removes:
                    data.pop(k, None)
                for k, v in sets.items():
                    data[k] = v
                if not data:
                    del meta[field]

            verb = "labeled" if what == "label" else "annotated"
            if dry_run:
                out(f"{kind_prefix(info)}/{key[3]} {verb} (dry run)")
                continue
            changed = edit.edit_object(store, src, mutate)
            out(f"{kind_prefix(info)}/{key[3]} {verb if changed else 'not ' + verb}")
    for info, n in missing:
        err(f'Error from server (NotFound): {info.resource_ref} "{n}" not found')
    if missing:
        raise SystemExit(int(ExitCode.NOT_FOUND))


def register(app: typer.Typer) -> None:
    """Add ``label`` and ``annotate`` to the app."""

    def make(what: str, doc: str):
        def command(ctx: typer.Context,
                    args: List[str] = typer.Argument(..., metavar="TYPE NAME | TYPE/NAME... KEY=VALUE... KEY-..."),
                    namespace: str = typer.Option("default", "-n", "--namespace"),
                    all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="With --all or -l: every namespace."),
                    overwrite: bool = typer.Option(False, "--overwrite", help="Replace keys that already have a value."),
                    all_objects: bool = typer.Option(False, "--all", help="Every object of the type (in the namespace)."),
                    selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Objects matching a label selector."),
                    dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change.")):
            meta_cmd(ctx.obj, what, args, namespace, overwrite, all_objects, selector, dry_run, all_namespaces)
        command.__doc__ = doc
        return command

    app.command("label")(make("label", "Update the labels of objects in the state directory (kubectl label)."))
    app.command("annotate")(make("annotation", "Update the annotations of objects in the state directory (kubectl annotate)."))
