"""``karmactl interpret``: run and check ResourceInterpreterCustomization scripts locally.

As karmadactl's (``pkg/karmadactl/interpret/``): ``--operation`` runs one customized operation on
objects from files and prints each result as YAML; without ``-f`` it runs the built-in layers
(the third-party rules of :mod:`karmactl.interpreter.thirdparty`, then the native ones) instead; ``--check`` checks every script of every
customization loads (``RULERS: <operation>: PASS | UNSET | ERROR: ...``) and, when a
``customizations_tests.yaml`` lies beside the file, runs its test cases as Karmada's third-party
customizations test does (``pkg/resourceinterpreter/default/thirdparty/thirdparty_test.go``)::

    karmactl interpret -f customization.yaml --operation InterpretReplica --observed-file guestbook.yaml
    karmactl interpret --operation InterpretHealth --observed-file cloneset.yaml     # built-in rules
    karmactl interpret -f customizations.yaml --check

Exit codes: 0 success; 1 ``--check`` found a syntax error or a test case whose result differs
(named); 2 bad input (files, flags, an object that is not a ResourceInterpreterCustomization) or
the operation failed.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, out

TESTS_FILE = "customizations_tests.yaml"


def register(app: typer.Typer) -> None:
    """Add ``interpret`` to the app."""

    @app.command()
    def interpret(ctx: typer.Context,
                  filename: List[str] = typer.Option([], "-f", "--filename",
                                                     help="Files or directories with ResourceInterpreterCustomizations "
                                                          "(none: run the built-in third-party and native rules)."),
                  operation: Optional[str] = typer.Option(None, "--operation", help=(
                      "The operation to run: Retain, InterpretReplica, ReviseReplica, InterpretStatus, "
                      "AggregateStatus, InterpretHealth, InterpretDependency, InterpretComponent.")),
                  check: bool = typer.Option(False, "--check", help="Check the scripts load, and run the test "
                                             f"cases of {TESTS_FILE} beside each file."),
                  desired_file: Optional[str] = typer.Option(None, "--desired-file", help="The desiredObj argument."),
                  observed_file: Optional[str] = typer.Option(None, "--observed-file", help="The observedObj argument."),
                  status_file: Optional[str] = typer.Option(None, "--status-file",
                                                            help="AggregatedStatusItems (YAML documents or a list), "
                                                                 "the statusItems argument."),
                  desired_replica: int = typer.Option(0, "--desired-replica", help="The desiredReplica argument.")):
        """Run a customization's Lua rules locally, or check them against their test cases."""
        c: Context = ctx.obj
        if check and not filename:
            raise CLIError("--check needs the customizations to check: give -f")
        if check:
            raise SystemExit(int(check_cmd(c, filename)))
        interpret_cmd(c, filename, operation, desired_file, observed_file, status_file, desired_replica)


# --------------------------------------------------------------------------- reading files

def _documents(path: str) -> list[tuple[dict, int]]:
    from karmactl.store.state import InputError, parse_documents

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file: {exc}", path) from None
    return [(doc, line) for doc, _index, line in parse_documents(text, path)]


def _files(paths: list[str]) -> list[str]:
    found = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found += sorted(str(f) for f in path.rglob("*") if f.suffix in (".yaml", ".yml", ".json")
                            and f.name != TESTS_FILE and "testdata" not in f.parts)
        else:
            found.append(p)
    return found


def load_customizations(paths: list[str], lua_errors: bool = True) -> list[tuple[str, dict]]:
    """``[(file, customization)]`` from files or directories, validated as ``apply`` does
    (``lua_errors`` False: scripts that do not load are let through, for ``--check`` to report).

    Raises:
        InputError: unreadable file, malformed YAML, an object that is not a
            ResourceInterpreterCustomization, or an invalid one (file, object and field named;
            a script that does not load names its ``luaScript`` field and line).
    """
    from karmactl.api.kinds import KindRegistry, group_of
    from karmactl.api.validation import validate_object
    from karmactl.store.state import InputError

    registry = KindRegistry.default()
    found = []
    for path in _files(paths):
        for doc, line in _documents(path):
            label = f"{doc.get('kind')} {(doc.get('metadata') or {}).get('name')}"
            if group_of(str(doc.get("apiVersion") or "")) != "config.karmada.io" or \
                    doc.get("kind") != "ResourceInterpreterCustomization":
                raise InputError("not a ResourceInterpreterCustomization (config.karmada.io/v1alpha1)",
                                 path, line, label, "kind")
            errors = [e for e in validate_object(doc, registry)
                      if lua_errors or not e.path.endswith(".luaScript")]
            if errors:
                raise InputError(errors[0].message, path, line, label, errors[0].path)
            found.append((path, doc))
    if not found:
        raise CLIError("no ResourceInterpreterCustomization in " + ", ".join(paths))
    return found


def _one_object(path: str | None, what: str) -> dict | None:
    from karmactl.store.state import InputError

    if path is None:
        return None
    docs = _documents(path)
    if len(docs) != 1:
        raise InputError(f"get {len(docs)} objects, expect one for {what}", path)
    return docs[0][0]


def _status_items(path: str | None) -> list[dict] | None:
    """AggregatedStatusItems: one per YAML document, or lists of them."""
    from karmactl.store import yamlio
    from karmactl.store.state import InputError

    if path is None:
        return None
    try:
        docs = yamlio.load_all(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file: {exc}", path) from None
    except yamlio.YAMLSyntaxError as exc:
        raise InputError(str(exc), path, exc.line) from None
    items = []
    for doc, line in docs:
        for item in doc if isinstance(doc, list) else [doc]:
            if not isinstance(item, dict):
                raise InputError("an AggregatedStatusItem must be a mapping (clusterName, status, applied, health)",
                                 path, line)
            items.append(item)
    return items


def _yaml(value) -> str:
    import yaml

    # through JSON first, as karmadactl's printObjectYaml: plain data, block style, keys sorted
    text = yaml.safe_dump(json.loads(json.dumps(value)), default_flow_style=False, sort_keys=True)
    return text[:-len("...\n")] if text.endswith("\n...\n") else text  # a scalar: no document end marker


# --------------------------------------------------------------------------- --operation

def interpret_cmd(c: Context, filenames: list[str], operation: str | None, desired_file: str | None,
                  observed_file: str | None, status_file: str | None, desired_replica: int) -> None:
    """Run one operation and print ``---`` / ``# [i/n] name:`` / YAML per result (karmadactl's format):
    the customizations of ``filenames``, or with none the built-in layers.

    Raises:
        CLIError: no operation, an unknown one, or the script failed (exit 2).
        InputError: unreadable or invalid files.
    """
    from karmactl.interpreter import Interpreter, InterpreterError
    from karmactl.interpreter.customized import operation_field

    if not operation:
        raise CLIError("operation is not set for executing: give --operation or --check")
    try:
        operation_field(operation)
    except InterpreterError as exc:
        raise CLIError(str(exc)) from None
    customizations = [doc for _path, doc in load_customizations(filenames)] if filenames else []
    desired = _one_object(desired_file, "--desired-file")
    observed = _one_object(observed_file, "--observed-file")
    status = _status_items(status_file)
    interpreter = Interpreter(customizations, now=c.now)
    try:
        results = interpreter.run_rule(operation, desired, observed, status, desired_replica, builtin=not filenames)
    except InterpreterError as exc:
        raise CLIError(f"execute {operation} error: {exc}") from None
    for i, (name, value) in enumerate(results, 1):
        out("---")
        out(f"# [{i}/{len(results)}] {name}:")
        out(_yaml(value).rstrip("\n"))


# --------------------------------------------------------------------------- --check

def check_cmd(c: Context, filenames: list[str]) -> int:
    """Check every customization's scripts load and run the test cases beside each file.

    Prints karmadactl's check table (``SOURCE``, ``TARGET``, ``RULERS``) per customization, then
    one ``PASS``/``FAIL`` line per test case. Returns the exit code: 0 all good, 1 a script does
    not load or a case fails.

    Raises:
        InputError: unreadable files, or a ``customizations_tests.yaml`` that is malformed.
    """
    from karmactl.interpreter.customized import OPERATIONS
    from karmactl.interpreter.luavm import LuaVM

    failed = False
    vm = LuaVM(now=c.now)
    # a script that does not load is reported in the table instead of stopping the check
    found = load_customizations(filenames, lua_errors=False)
    for path, doc in found:
        spec = doc.get("spec") or {}
        target = spec.get("target") or {}
        rules = spec.get("customizations") or {}
        out("-----------------------------------")
        out(f"SOURCE: {(doc.get('metadata') or {}).get('name') or path}")
        out(f"TARGET: {target.get('apiVersion')} {target.get('kind')}")
        out("RULERS:")
        for field, (name, _fn) in OPERATIONS.items():
            script = (rules.get(field) or {}).get("luaScript") if isinstance(rules.get(field), dict) else None
            if not script:
                out(f"    {name}: UNSET")
                continue
            problem = vm.syntax_error(script)
            if problem:
                failed = True
                out(f"    {name}: ERROR: {problem}")
            else:
                out(f"    {name}: PASS")
    by_file: dict = {}
    for path, doc in found:
        by_file.setdefault(path, []).append(doc)
    for path, docs in by_file.items():
        tests = Path(path).parent / TESTS_FILE
        if tests.is_file():
            failed = _run_tests(c, tests, docs) or failed
    return ExitCode.CHANGES if failed else ExitCode.OK


def _run_tests(c: Context, tests_file: Path, customizations: list[dict]) -> bool:
    """Run the cases of one ``customizations_tests.yaml``; True when one fails."""
    from karmactl.interpreter import Interpreter, InterpreterError
    from karmactl.store.state import InputError

    docs = _documents(str(tests_file))
    cases = docs[0][0].get("tests") if len(docs) == 1 else None
    if not isinstance(cases, list):
        raise InputError("expected a mapping with a list of test cases under tests", str(tests_file), None, None, "tests")
    base = tests_file.parent
    interpreter = Interpreter(customizations, now=c.now)
    failed = False
    out("-----------------------------------")
    out(f"TESTS: {tests_file}")
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            raise InputError("a test case must be a mapping", str(tests_file), None, None, f"tests[{i}]")
        op = case.get("operation") or ""
        name = f"tests[{i}] {op}" + "".join(f" {case[k]}" for k in ("observedInputPath", "desiredInputPath")
                                             if case.get(k))

        def path_of(key):
            value = case.get(key)
            return str(base / str(value).lstrip("/")) if value else None

        try:
            desired = _one_object(path_of("desiredInputPath"), f"tests[{i}].desiredInputPath")
            observed = _one_object(path_of("observedInputPath"), f"tests[{i}].observedInputPath")
            status = _status_items(path_of("statusInputPath"))
            expected = case.get("expectedOutput")
            if case.get("expectedOutputPath"):
                expected = _one_object(path_of("expectedOutputPath"), f"tests[{i}].expectedOutputPath")
            results = interpreter.run_rule(op, desired, observed, status, int(case.get("desiredReplicas") or 0))
        except InterpreterError as exc:
            failed = True
            out(f"FAIL {name}: {exc}")
            continue
        problems = []
        for result, value in results:
            want = (expected or {}).get(result) if isinstance(expected, dict) else None
            if want is None:
                continue  # Karmada checks only what a case states
            if json.loads(json.dumps(value, sort_keys=True)) != json.loads(json.dumps(want, sort_keys=True)):
                problems.append(f"{result} differs: expected {json.dumps(want, sort_keys=True)}, "
                                f"got {json.dumps(value, sort_keys=True)}")
        if problems:
            failed = True
            out(f"FAIL {name}: " + "; ".join(problems))
        else:
            out(f"PASS {name}")
    return failed


__all__ = ["check_cmd", "interpret_cmd", "load_customizations", "register"]
