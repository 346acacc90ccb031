"""``karmactl interpret``: run and check ResourceInterpreterCustomization scripts locally.

As karmadactl's (``pkg/karmadactl/interpret/``): ``--operation`` runs one customized operation on
objects from files and prints each result as YAML; without ``-f`` it runs the built-in layers
(the third-party rules of :mod:`karmactl.interpreter.thirdparty`, then the native ones) instead;
``--check`` checks every script of every customization loads (``RULERS: <operation>: PASS | UNSET |
ERROR: ...``) and runs the test cases beside each customization file as Karmada's third-party
customizations test does (``pkg/resourceinterpreter/default/thirdparty/thirdparty_test.go``):
``testdata/*-test.yaml`` (Karmada's format since v1.17, one case per document, inputs inline) and the
former ``customizations_tests.yaml`` (inputs in files); comparisons in
:mod:`karmactl.interpreter.checking`::

    karmactl interpret -f customization.yaml --operation InterpretReplica --observed-file guestbook.yaml
    karmactl interpret --operation InterpretHealth --observed-file cloneset.yaml     # built-in rules
    karmactl interpret -f customizations.yaml --check
    karmactl interpret --check --testdata tests/interpreter/thirdparty/testdata   # built-in rules

``--check --testdata DIR`` (no ``-f``) runs the ``*-test.yaml`` cases under ``DIR`` (or one such
file) against the built-in layers, third-party then native, each case on the layer that answers for
its object's kind, read, compared and reported as the cases of customizations are (a summary per
kind, ``Kind.version.group``).

Exit codes: 0 success (``--check``: cases ran and all passed); 1 ``--check`` found a failing case,
a script that does not load or a refused customization (each named; the others still run); 2 bad
input (files, flags, an object that is not a ResourceInterpreterCustomization), ``--check`` found
no case, or the operation failed.
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
                                             "cases beside each file: testdata/*-test.yaml (Karmada's format) "
                                             f"and {TESTS_FILE}; without -f, the cases of --testdata against "
                                             "the built-in rules."),
                  testdata: Optional[str] = typer.Option(None, "--testdata", help=(
                      "With --check and no -f: a directory of *-test.yaml cases (Karmada's format; or one such "
                      "file) to run against the built-in third-party and native rules.")),
                  desired_file: Optional[str] = typer.Option(None, "--desired-file", help="The desiredObj argument."),
                  observed_file: Optional[str] = typer.Option(None, "--observed-file", help="The observedObj argument."),
                  status_file: Optional[str] = typer.Option(None, "--status-file",
                                                            help="AggregatedStatusItems (YAML documents or a list), "
                                                                 "the statusItems argument."),
                  desired_replica: int = typer.Option(0, "--desired-replica", help="The desiredReplica argument.")):
        """Run a customization's Lua rules locally, or check them against their test cases."""
        c: Context = ctx.obj
        if testdata is not None and (not check or filename):
            raise CLIError("--testdata runs cases against the built-in rules: give it with --check and without -f "
                           "(the cases of customizations are read from testdata/ beside their files)")
        if check and not filename and testdata is None:
            raise CLIError("--check needs the customizations to check (-f) or the cases of the built-in rules "
                           "(--testdata DIR)")
        if check:
            raise SystemExit(int(check_cmd(c, filename) if filename else check_builtin_cmd(c, testdata)))
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
                            and f.name != TESTS_FILE and "testdata" not in f.relative_to(path).parts)
        else:
            found.append(p)
    return found


def _read_customizations(paths: list[str]) -> list[tuple[str, int, dict, list]]:
    """``[(file, line, customization, validation errors)]`` of files or directories.

    Raises:
        InputError: unreadable file, malformed YAML, or an object that is not a
            ResourceInterpreterCustomization (file and object named).
    """
    from karmactl.api.kinds import KindRegistry, group_of
    from karmactl.api.validation import validate_object
    from karmactl.store.state import InputError

    registry = KindRegistry.default()
    found = []
    for path in _files(paths):
        for doc, line in _documents(path):
            if group_of(str(doc.get("apiVersion") or "")) != "config.karmada.io" or \
                    doc.get("kind") != "ResourceInterpreterCustomization":
                raise InputError("not a ResourceInterpreterCustomization (config.karmada.io/v1alpha1)",
                                 path, line, _label(doc), "kind")
            found.append((path, line, doc, validate_object(doc, registry)))
    return found


def _script_error(error) -> bool:
    """Whether a validation error is a script that does not load (``--check`` reports it in its
    table; any other error refuses the customization)."""
    return error.path.endswith(".luaScript") and "Lua syntax error: " in error.message


def _label(doc: dict) -> str:
    return f"{doc.get('kind')} {(doc.get('metadata') or {}).get('name')}"


def load_customizations(paths: list[str], lua_errors: bool = True) -> list[tuple[str, dict]]:
    """``[(file, customization)]`` from files or directories, validated as ``apply`` does
    (``lua_errors`` False: scripts that do not load are let through).

    Raises:
        InputError: unreadable file, malformed YAML, an object that is not a
            ResourceInterpreterCustomization, or an invalid one (file, object and field named;
            a script that does not load names its ``luaScript`` field and line).
    """
    from karmactl.store.state import InputError

    found = []
    for path, line, doc, errors in _read_customizations(paths):
        errors = [e for e in errors if lua_errors or not _script_error(e)]
        if errors:
            raise InputError(errors[0].message, path, line, _label(doc), errors[0].path)
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

class _Report:
    """Per customization: cases passed and failed, and its other failures (refused, a script
    that does not load, a test file that cannot be read)."""

    def __init__(self):
        self.passed: dict[str, int] = {}
        self.failed: dict[str, list[str]] = {}
        self.order: list[str] = []

    def _entry(self, label: str) -> None:
        if label not in self.passed:
            self.order.append(label)
            self.passed[label] = 0
            self.failed[label] = []

    def case(self, label: str, case, problems: list[str]) -> None:
        self._entry(label)
        title = f"[{label}/{case.operation}]:{case.name}"
        if problems:
            self.failed[label].append(title)
            out(f"FAIL {title} ({case.source}): " + "; ".join(problems))
        else:
            self.passed[label] += 1
            out(f"PASS {title}")

    def fail(self, label: str, what: str) -> None:
        self._entry(label)
        self.failed[label].append(what)


def check_cmd(c: Context, filenames: list[str]) -> int:
    """Check every customization: its scripts load, and the test cases beside it pass.

    Prints karmadactl's check table (``SOURCE``, ``TARGET``, ``RULERS``) per customization, one
    ``PASS``/``FAIL [customization/Operation]:case`` line per case (the failing ones with their
    file, line and differences), then a summary per customization. Cases are read from
    ``testdata/*-test.yaml`` beside the customization's file (Karmada's format since v1.17) and
    from ``customizations_tests.yaml`` (the former one), and compared as Karmada's runner does
    (:mod:`karmactl.interpreter.checking`). A customization refused on load (a field karmactl
    does not support, an invalid one) is one failure; the others still run. Every case runs
    against each customization of its directory that targets its object's kind.

    Returns the exit code: 0 when cases ran and all passed, 1 when anything failed.

    Raises:
        CLIError: no case found anywhere and nothing failed (exit 2).
        InputError: unreadable files, or an object that is not a ResourceInterpreterCustomization.
    """
    from karmactl.interpreter.luavm import LuaVM

    report = _Report()
    vm = LuaVM(now=c.now)
    entries = _read_customizations(filenames)
    if not entries:
        raise CLIError("no ResourceInterpreterCustomization in " + ", ".join(filenames))
    by_dir: dict[Path, list[tuple[str, dict]]] = {}
    names = [(doc.get("metadata") or {}).get("name") or path for path, _line, doc, _e in entries]
    for (path, line, doc, errors), name in zip(entries, names):
        label = name if names.count(name) == 1 else f"{path}:{line}:{name}"
        _print_table(vm, report, label, path, line, doc, errors)
        if not any(not _script_error(e) for e in errors):
            by_dir.setdefault(Path(path).parent, []).append((label, doc))
    cases = 0
    for directory, customizations in by_dir.items():
        cases += _check_directory(c, report, directory, customizations)
    return _summary(report, cases, "put Karmada-format cases in testdata/*-test.yaml (or a "
                                   f"{TESTS_FILE}) beside the customization files of " + ", ".join(filenames))


def check_builtin_cmd(c: Context, testdata: str) -> int:
    """Run the ``*-test.yaml`` cases of ``testdata`` (a directory, searched recursively, or one
    file) against the built-in layers (third-party rules, then native: ``Interpreter.run_rule``
    with ``builtin``), compared as :func:`check_cmd` compares them.

    Prints one ``PASS``/``FAIL [Kind.version.group/Operation]:case`` line per case (the failing
    ones with their file, line and differences), then a summary per kind.

    Returns the exit code: 0 when cases ran and all passed, 1 when a case failed or a file or
    case could not be read.

    Raises:
        CLIError: no case found and nothing failed (exit 2).
        InputError: ``testdata`` does not exist.
    """
    from karmactl.interpreter import Interpreter
    from karmactl.interpreter.checking import run_case
    from karmactl.store.state import InputError

    path = Path(testdata)
    if not path.exists():
        raise InputError("no such file or directory (--testdata)", testdata)
    report = _Report()
    interpreter = Interpreter(now=c.now)
    cases = _testdata_cases(report, path)
    for case in cases:
        target = case.target()
        report.case(_kind_label(*target) if target else "(no object)", case, run_case(interpreter, case, builtin=True))
    return _summary(report, len(cases), f"put Karmada-format cases (*-test.yaml) in {testdata}")


def _kind_label(api_version: str, kind: str) -> str:
    """``Kind.version.group`` (kubectl's fully qualified spelling), ``Kind.version`` for the core group."""
    group, _, version = api_version.rpartition("/")
    return ".".join(part for part in (kind, version, group) if part)


def _print_table(vm, report: _Report, label: str, path: str, line: int, doc: dict, errors: list) -> None:
    from karmactl.interpreter.customized import OPERATIONS

    spec = doc.get("spec") or {}
    target = spec.get("target") or {}
    rules = spec.get("customizations") or {}
    out("-----------------------------------")
    out(f"SOURCE: {label}")
    out(f"TARGET: {target.get('apiVersion')} {target.get('kind')}")
    refused = [e for e in errors if not _script_error(e)]
    if refused:
        message = f"{path}:{line}: {_label(doc)}: {refused[0].path}: {refused[0].message}"
        out(f"REFUSED: {message}")
        report.fail(label, f"refused: {message}")
        return
    out("RULERS:")
    for field, (name, _fn) in OPERATIONS.items():
        script = (rules.get(field) or {}).get("luaScript") if isinstance(rules.get(field), dict) else None
        if not script:
            out(f"    {name}: UNSET")
            continue
        problem = vm.syntax_error(script)
        if problem:
            report.fail(label, f"{name}: the script does not load: {problem}")
            out(f"    {name}: ERROR: {problem}")
        else:
            out(f"    {name}: PASS")


def _check_directory(c: Context, report: _Report, directory: Path, customizations: list[tuple[str, dict]]) -> int:
    """Run the cases of one directory against its customizations; the number of cases run."""
    from karmactl.interpreter import Interpreter
    from karmactl.interpreter.checking import run_case

    cases = _old_cases(report, directory) + _new_cases(report, directory)
    if not cases:
        return 0
    interpreter = Interpreter([doc for _label, doc in customizations], now=c.now)
    ran = 0
    for case in cases:
        target = case.target()
        matching = [label for label, doc in customizations
                    if target is None or _target(doc) == target]
        if not matching:
            report.fail(str(directory), f"{case.source}: {case.name}: no customization in {directory} "
                                        f"targets {target[0]} {target[1]}")
            out(f"FAIL {case.name} ({case.source}): no customization in {directory} targets {target[0]} {target[1]}")
            continue
        for label in matching:
            ran += 1
            report.case(label, case, run_case(interpreter, case))
    return ran


def _target(doc: dict) -> tuple[str, str]:
    target = (doc.get("spec") or {}).get("target") or {}
    return str(target.get("apiVersion") or ""), str(target.get("kind") or "")


def _new_cases(report: _Report, directory: Path) -> list:
    """The cases of ``testdata/*-test.yaml`` beside the customization files of ``directory``."""
    testdata = directory / "testdata"
    return _testdata_cases(report, testdata) if testdata.is_dir() else []


def _testdata_cases(report: _Report, testdata: Path) -> list:
    """The cases of the ``*-test.yaml`` files under ``testdata`` (a directory, recursively, or one
    file; Karmada's format since v1.17), a file that cannot be read or a case that cannot be run
    counted as one failure each."""
    from karmactl.interpreter.checking import CaseError, case_of_document
    from karmactl.store import yamlio

    files = [testdata] if testdata.is_file() else \
        sorted(f for f in testdata.rglob("*") if f.is_file() and f.name.endswith(("-test.yaml", "-test.yml")))
    cases = []
    for file in files:
        shown = str(file)
        try:
            docs = yamlio.load_all(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            _unreadable(report, shown, f"cannot read file: {exc}")
            continue
        except yamlio.YAMLSyntaxError as exc:
            _unreadable(report, f"{shown}:{exc.line}" if exc.line else shown, str(exc))
            continue
        for index, (doc, line) in enumerate(docs):
            try:
                cases.append(case_of_document(doc, f"{shown}:{line}", index))
            except CaseError as exc:
                _unreadable(report, f"{shown}:{line}", str(exc))
    return cases


def _unreadable(report: _Report, where: str, message: str) -> None:
    report.fail(where, message)
    out(f"FAIL {where}: {message}")


def _old_cases(report: _Report, directory: Path) -> list:
    """The cases of ``customizations_tests.yaml`` (the former format), inputs read from the files
    they name (relative to the directory); a case whose files cannot be read is one failure."""
    from karmactl.interpreter.checking import Case
    from karmactl.store.state import InputError

    tests_file = directory / TESTS_FILE
    if not tests_file.is_file():
        return []
    try:
        docs = _documents(str(tests_file))
    except InputError as exc:
        _unreadable(report, str(tests_file), str(exc))
        return []
    tests = docs[0][0].get("tests") if len(docs) == 1 else None
    if not isinstance(tests, list):
        _unreadable(report, str(tests_file), "expected a mapping with a list of test cases under tests")
        return []
    cases = []
    for i, case in enumerate(tests):
        where = f"{tests_file}: tests[{i}]"
        if not isinstance(case, dict):
            _unreadable(report, where, "a test case must be a mapping")
            continue

        def path_of(key):
            value = case.get(key)
            return str(directory / str(value).lstrip("/")) if value else None

        name = f"tests[{i}]" + "".join(f" {case[k]}" for k in ("observedInputPath", "desiredInputPath") if case.get(k))
        try:
            expected = case.get("expectedOutput")
            if case.get("expectedOutputPath"):
                expected = _one_object(path_of("expectedOutputPath"), f"tests[{i}].expectedOutputPath")
            cases.append(Case(name=name, operation=str(case.get("operation") or ""), source=where,
                              desired=_one_object(path_of("desiredInputPath"), f"tests[{i}].desiredInputPath"),
                              observed=_one_object(path_of("observedInputPath"), f"tests[{i}].observedInputPath"),
                              status_items=_status_items(path_of("statusInputPath")),
                              replicas=int(case.get("desiredReplicas") or 0),
                              output=expected if isinstance(expected, dict) else None))
        except (InputError, ValueError, TypeError) as exc:
            _unreadable(report, where, str(exc))
    return cases


def _summary(report: _Report, cases: int, hint: str) -> int:
    """Print the summary per customization (per kind for the built-in rules); the exit code.
    ``hint`` says where cases are looked for, in the message when none was found."""
    failures = sum(len(v) for v in report.failed.values())
    if not cases and not failures:
        raise CLIError("no test cases found: " + hint)
    out("-----------------------------------")
    out("SUMMARY:")
    for label in report.order:
        failed = report.failed[label]
        line = f"    {label}: {report.passed[label]} passed, {len(failed)} failed"
        out(line + "".join(f"\n        FAILED {what}" for what in failed))
    passed = sum(report.passed.values())
    out(f"{cases} cases: {passed} passed, {cases - passed} failed"
        + (f"; {failures - (cases - passed)} other failures" if failures > cases - passed else ""))
    if not cases:
        out("no test cases ran")
    return ExitCode.CHANGES if failures else ExitCode.OK


__all__ = ["check_builtin_cmd", "check_cmd", "interpret_cmd", "load_customizations", "register"]
