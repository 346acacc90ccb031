"""``get`` and ``describe`` without typer: the commands people run most answer without importing typer
(which brings pydantic and builds a type adapter per parameter on every call: about half of a small
``get``'s time).

The parameters of the root command and of :data:`LIGHT_COMMANDS` are generated into
``static_cli.json`` from the typer app (:func:`karmactl.cli.completing.params_of`), so the typer
declarations of the command modules (``karmactl/cli/cmd/``) stay the one definition of the flags. :func:`parse` reads the
plain forms click reads the same way (``--opt VALUE``, ``--opt=VALUE``, ``-o VALUE``, ``-oVALUE``, flags,
counts, repeated options, positional arguments anywhere after the command); for anything else (help,
``--version``, an unknown or combined flag, a missing value, a value that starts with ``-``, ``--``,
a wrong number of arguments) it returns None and the typer app parses the line, so errors and their
wording are click's. Both paths call the same functions of the command modules (:data:`LIGHT_COMMANDS`).
"""
from __future__ import annotations

import os
from pathlib import Path

# command -> (its module, the function its typer command calls with the same parameters)
LIGHT_COMMANDS = {"get": ("karmactl.cli.cmd.get", "get_from_flags"),
                  "describe": ("karmactl.cli.cmd.describe", "describe_from_args"),
                  "reconcile": ("karmactl.cli.cmd.reconcile", "reconcile_cmd")}


class _Unsure(Exception):
    """The line has a form only click should judge."""


def _scan(params: list[dict], words: list[str], values: dict, stop_at_command: bool) -> tuple[list[str], int]:
    """Read options of ``params`` from ``words`` into ``values`` (by parameter name) -> ``(positional
    words, index where scanning stopped)``; with ``stop_at_command`` it stops at the first positional
    word (a group's subcommand).

    Raises:
        _Unsure: see the module docstring.
    """
    flags = {}
    for p in params:
        if p["kind"] == "option":
            for opt in p["opts"]:
                flags[opt] = p
    positional: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-" or not w.startswith("-"):
            if stop_at_command:
                return positional, i
            positional.append(w)
            i += 1
            continue
        if w.startswith("--"):
            name, eq, value = w.partition("=")
            attached = value if eq else None
        else:
            name, attached = w[:2], (w[2:] or None)
        p = flags.get(name)
        if p is None or p["eager"] or name in ("-h", "--help", "--"):
            raise _Unsure(w)
        i += 1
        if p["type"] in ("flag", "count"):
            if attached is not None:
                raise _Unsure(w)
            values[p["name"]] = values.get(p["name"], 0) + 1 if p["type"] == "count" else True
            continue
        if attached is None:
            if i >= len(words):
                raise _Unsure(w)
            attached = words[i]
            i += 1
        if attached.startswith("-"):
            raise _Unsure(attached)
        if p["multiple"]:
            values.setdefault(p["name"], []).append(attached)
        else:
            values[p["name"]] = attached
    return positional, i


def _finish(params: list[dict], positional: list[str], values: dict) -> dict:
    """Arguments from ``positional``; defaults (or the environment variable) for what was not given;
    ``Path`` values converted.

    Raises:
        _Unsure: missing or extra arguments.
    """
    args = [p for p in params if p["kind"] == "argument"]
    if sum(1 for p in args if p["nargs"] == -1) > 1:
        raise _Unsure("arguments")
    rest = list(positional)
    for n, p in enumerate(args):
        if p["nargs"] == -1:  # all but what the arguments after it take
            take = max(0, len(rest) - sum(1 for q in args[n + 1:]))
            if not take and p["required"]:
                raise _Unsure(p["name"])
            values[p["name"]], rest = (rest[:take] or None), rest[take:]
        elif rest:
            values[p["name"]], rest = rest[0], rest[1:]
        elif p["required"]:
            raise _Unsure(p["name"])
    if rest:
        raise _Unsure(rest[0])
    for p in params:
        if p["name"] not in values:
            env = os.environ.get(p["envvar"]) if p["envvar"] else None
            values[p["name"]] = env if env else p["default"]
        if p["type"] == "path" and values[p["name"]] is not None:
            values[p["name"]] = Path(values[p["name"]])
    return values


def parse(argv: list[str]) -> tuple[dict, str, dict] | None:
    """``(global values, command, command values)`` of a ``get``/``describe`` line (global options
    first, as :func:`karmactl.cli.main.hoist_global_options` leaves them), values named as the typer
    parameters; None when typer should parse it (another command, or a form only click should judge)."""
    from karmactl.cli.completing import static_data

    tree = static_data()["tree"]
    try:
        glob: dict = {}
        _, i = _scan(tree["params"], argv, glob, stop_at_command=True)
        if i >= len(argv) or argv[i] not in LIGHT_COMMANDS:
            return None
        command = argv[i]
        params = tree["commands"][command]["params"]
        values: dict = {}
        positional, _ = _scan(params, argv[i + 1:], values, stop_at_command=False)
        return _finish(tree["params"], [], glob), command, _finish(params, positional, values)
    except _Unsure:
        return None


def run(argv: list[str]) -> bool:
    """Run ``argv`` when it is a line :func:`parse` reads (True), else do nothing (False).

    Raises:
        whatever the command raises (:class:`karmactl.cli.context.CLIError`, ``SystemExit``...), as the
        typer path does.
    """
    parsed = parse(argv)
    if parsed is None:
        return False
    glob, command, values = parsed
    import importlib

    from karmactl.cli.context import start_context

    module, function = LIGHT_COMMANDS[command]
    c = start_context(glob["state"], glob["now"], glob["verbose"], glob["lock_timeout"], command,
                      glob.get("kubeconfig_dir"), glob.get("allow_exec_plugins"), glob.get("allow_proxy"))
    getattr(importlib.import_module(module), function)(c, **values)
    return True
