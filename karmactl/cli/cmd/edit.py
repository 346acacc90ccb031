"""``karmactl edit``: edit an object of the state directory in ``$KUBE_EDITOR`` or ``$EDITOR`` (kubectl
``pkg/cmd/edit``); comments are kept, and a failed save reopens the editor with the errors."""
from __future__ import annotations

from typing import List

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, out
from karmactl.cli.objects import select_targets


EDIT_HEADER = """# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
"""


def _editor() -> str:
    """``$KUBE_EDITOR``, else ``$EDITOR``, else ``vi`` (kubectl's order)."""
    import os
    return os.environ.get("KUBE_EDITOR") or os.environ.get("EDITOR") or "vi"


def edit_cmd(c: Context, args: list[str], namespace: str) -> None:
    """kubectl's ``edit``: the object as stored (its comments included) opens in the editor; the saved
    text is re-validated as ``apply`` validates and written back in place of the object's document in its
    file. On an error the file reopens with the error on top, as kubectl does; saving it unchanged (or
    empty) cancels.

    Raises:
        CLIError: not one object named (exit 2), the object not found (exit 1), the edit cancelled after
            an error (exit 1), the editor failing.
    """
    from karmactl.cli.printers import kind_prefix
    from karmactl.store import edit
    from karmactl.store.fsio import read_text, state_lock
    from karmactl.store.rewrite import UserFile, load_document
    from karmactl.store.state import StateStore

    with state_lock(c.state):
        store = StateStore(c.state)
        index = edit.index_user_objects(store)
        targets, missing = select_targets(store, index, args, namespace, False, None, False, "edited")
        for info, n in missing:
            raise CLIError(f'Error from server (NotFound): {info.resource_ref} "{n}" not found', ExitCode.NOT_FOUND)
        if len(targets) != 1:
            raise CLIError("edit takes one object: TYPE NAME or TYPE/NAME")
        info, key, src = targets[0]
        file = UserFile(read_text(store.root / src.path))
        original = file.style_dump(file.live[src.index])
        original = original[4:] if original.startswith("---\n") else original
        text = _edit_until_valid(original, lambda body: _check_edited(body, store, info, key, src), key[3])
        if text is None:
            out("Edit cancelled, no changes made.")
            return
        edit.replace_document(store, src, load_document(text))
        out(f"{kind_prefix(info)}/{key[3]} edited")


def _edit_until_valid(original: str, check, name: str) -> str | None:
    """Open ``original`` in the editor until the saved text passes ``check(text) -> error message | None``;
    each error is shown on top of the reopened file. Returns the saved text, or None when it was saved
    empty or unchanged (cancelled).

    Raises:
        CLIError: the editor failed; saved empty or unchanged after an error (exit 1).
    """
    import os
    import subprocess
    import tempfile

    text, error = original, None
    fd, tmp = tempfile.mkstemp(prefix=f"karmactl-edit-{name}-", suffix=".yaml")
    os.close(fd)
    try:
        while True:
            shown = EDIT_HEADER + "".join(f"# {line}\n" for line in (error or "").splitlines()) + \
                ("#\n" if error else "") + text
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(shown)
            if subprocess.call(f'{_editor()} "{tmp}"', shell=True) != 0:
                raise CLIError(f"the editor ({_editor()}) exited with an error; nothing was changed")
            with open(tmp, encoding="utf-8") as fh:
                saved = fh.read()
            prefix = shown[:len(shown) - len(text)]
            body = saved[len(prefix):] if saved.startswith(prefix) else _strip_header(saved)
            if error is not None and (not body.strip() or body == text):
                raise CLIError("Edit cancelled, no valid changes were saved.", ExitCode.NOT_FOUND)
            if not body.strip() or body == original:
                return None
            text = body
            error = check(body)
            if error is None:
                return text
    finally:
        os.unlink(tmp)


def _check_edited(body: str, store, info, key: tuple, src) -> str | None:
    """What is wrong with the edited text ``body`` of the object ``key`` (kubectl's ``... was not valid``
    message), None if it is one valid object of the same identity, validated as ``apply`` validates."""
    from karmactl.cli.printers import kind_prefix
    from karmactl.reconcile import normalize_object
    from karmactl.store import yamlio
    from karmactl.store.state import InputError, Source

    try:
        parsed = [d for d, _line in yamlio.load_all(body)]
        if len(parsed) != 1 or not isinstance(parsed[0], dict):
            raise CLIError("the edited file must hold exactly one object")
        new = parsed[0]
        meta = new.get("metadata") if isinstance(new.get("metadata"), dict) else {}
        if not (info.accepts(str(new.get("apiVersion"))) and new.get("kind") == info.kind
                and meta.get("name") == key[3]
                and (meta.get("namespace") or ("default" if info.namespaced else "")) == key[2]):
            raise CLIError("apiVersion, kind, name and namespace cannot be changed by edit")
        normalize_object(new, Source(src.path, src.index, src.line), store.registry, strict=True)
    except (CLIError, InputError, yamlio.YAMLSyntaxError) as exc:
        return f"{kind_prefix(info)} \"{key[3]}\" was not valid:\n* {exc}"
    return None

def _strip_header(saved: str) -> str:
    """The saved text without the leading comment block karmactl wrote (the object's own comments stay)."""
    lines = saved.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    return "".join(lines[i:])


def register(app: typer.Typer) -> None:
    """Add ``edit`` to the app."""

    @app.command()
    def edit(ctx: typer.Context, args: List[str] = typer.Argument(..., metavar="TYPE NAME | TYPE/NAME"),
             namespace: str = typer.Option("default", "-n", "--namespace")):
        """Edit an object of the state directory in $KUBE_EDITOR or $EDITOR (kubectl edit); comments are kept."""
        edit_cmd(ctx.obj, args, namespace)
