"""The ``karmactl`` entry point: kubectl and karmadactl conventions (DESIGN §5).

Data goes to stdout; progress, warnings and errors to stderr. Every failure is a one-line
``error: ...`` with an exit code from :class:`~karmactl.cli.context.ExitCode`; no traceback reaches
the user (``-v`` shows one for internal errors).

Start-up is kept light: ``--help`` is answered from the help texts generated into
``karmactl/cli/static_cli.json`` and completion requests (``karmactl __complete WORDS...``) by
:mod:`karmactl.cli.completing`, neither importing typer or the control plane; ``get`` and ``describe``
are parsed by :mod:`karmactl.cli.light` from the parameters generated into the same file; every other
command (and any line the light parser leaves to click) imports the typer app (:mod:`karmactl.cli.app`).
"""
from __future__ import annotations

import os
import sys

EXIT_INPUT_ERROR = 2  # karmactl.cli.context.ExitCode.INPUT_ERROR, without importing it


def __getattr__(name: str):
    """``karmactl.cli.main.app``: the typer app, imported on first use."""
    if name == "app":
        from karmactl.cli.app import app
        return app
    raise AttributeError(name)


def run(argv: list[str] | None = None) -> None:
    """Console-script entry point: runs the app and maps errors to exit codes.

    SIGINT and SIGTERM stop the command at the next safe point (never inside a commit): it prints
    ``interrupted`` and exits 130 (143 for SIGTERM) at once, without waiting for member calls
    still under way in other threads (the state directory is as before, or complete). Help and
    completion requests install nothing (they import no more than they need).
    """
    words = list(argv if argv is not None else sys.argv[1:])
    if not (words[:1] == ["__complete"] or (words and words[-1] in ("--help", "-h"))):
        from karmactl.store import fsio

        fsio.install_signal_handlers()
    code = main_exit_code(argv)
    if code in (130, 143):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


_GLOBAL_WITH_VALUE = ("--state", "--now", "--lock-timeout", "--kubeconfig-dir", "--allow-proxy")
_GLOBAL_FLAGS = ("-v", "--verbose", "-vv", "-vvv", "--allow-exec-plugins")


def hoist_global_options(argv: list[str]) -> list[str]:
    """Move global options given after the subcommand to the front, as kubectl accepts them anywhere."""
    front, rest = [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest.extend(argv[i:])
            break
        if a in _GLOBAL_WITH_VALUE and i + 1 < len(argv):
            front += [a, argv[i + 1]]
            i += 2
            continue
        if any(a.startswith(g + "=") for g in _GLOBAL_WITH_VALUE) or a in _GLOBAL_FLAGS:
            front.append(a if a not in ("-vv", "-vvv") else "-v")
            i += 1
            continue
        rest.append(a)
        i += 1
    return front + rest


def dry_run_values(argv: list[str]) -> list[str]:
    """kubectl's ``--dry-run=client|server|none``: client and server both mean karmactl's ``--dry-run``
    (there is no server; nothing is written either way), ``none`` means no dry run.

    Raises nothing: any other value is left for the command's parser to refuse.
    """
    out = []
    for i, a in enumerate(argv):
        if a == "--":
            out += argv[i:]
            break
        if a in ("--dry-run=client", "--dry-run=server"):
            out.append("--dry-run")
        elif a != "--dry-run=none":
            out.append(a)
    return out


def _static_help(argv: list[str]) -> str | None:
    """The generated help text for ``[COMMAND...] --help`` (None: let typer answer)."""
    if not argv or argv[-1] not in ("--help", "-h"):
        return None
    words = [a for a in argv[:-1]]
    i = 0
    while i < len(words) and words[i].startswith("-"):  # global options before the command
        i += 2 if words[i] in _GLOBAL_WITH_VALUE else 1
    path = words[i:]
    if any(w.startswith("-") for w in path):
        return None
    import shutil
    if shutil.get_terminal_size().columns < 80:  # click wraps help to narrower terminals itself
        return None
    from karmactl.cli.completing import static_data
    return static_data()["help"].get(" ".join(path))


def main_exit_code(argv: list[str] | None = None) -> int:
    """Run karmactl with ``argv`` (default: ``sys.argv[1:]``); returns the exit code (see README)."""
    argv = list(argv if argv is not None else sys.argv[1:])
    if argv[:1] == ["__complete"]:
        from karmactl.cli.completing import main as complete_main
        return complete_main(argv[1:])
    argv = hoist_global_options(dry_run_values(argv))
    text = _static_help(argv)
    if text is not None:
        sys.stdout.write(text)
        return 0
    from karmactl.cli.context import err
    from karmactl.store import fsio

    verbose = "-v" in argv or "--verbose" in argv
    fsio.INTERRUPTED.clear()
    try:
        code = _main_exit_code(argv, verbose)
    finally:  # the credential flags and a reader's commit lock end with this command (an in-process caller runs more)
        fsio.release_read_lock()
        policy = sys.modules.get("karmactl.members.kubeconfig")
        if policy is not None:
            policy.configure()
    if fsio.INTERRUPTED:
        if code not in (130, 143):
            err("interrupted")
        return 143 if fsio.INTERRUPTED[0] == 15 else 130
    return code


def _main_exit_code(argv: list[str], verbose: bool) -> int:
    from karmactl.cli.context import CLIError, ExitCode, err
    from karmactl.store.fsio import Terminated

    try:
        from karmactl.cli.light import run as run_light
        if not run_light(argv):  # get and describe without typer
            from karmactl.cli.app import click_command
            click_command().main(args=argv, prog_name="karmactl", standalone_mode=False)
        return int(ExitCode.OK)
    except SystemExit as exc:  # typer.Exit inside commands
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    except CLIError as exc:
        err(str(exc) if str(exc).startswith("Error from server") else f"error: {exc}")
        return int(exc.code)
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except Terminated:
        err("interrupted (SIGTERM)")
        return 143
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback for users
        code = _known_error_code(exc)
        if code is not None:
            err(f"error: {exc}")
            return code
        if _is_environment_error(exc):
            err(f"error: {environment_message(exc)}")
            return int(ExitCode.ENVIRONMENT)
        if type(exc).__name__ == "Exit" and hasattr(exc, "exit_code"):
            return int(exc.exit_code)
        if type(exc).__name__ == "Abort":
            err("aborted")
            return 1
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):  # click usage errors (typer vendors click)
            exc.show()
            return int(ExitCode.INPUT_ERROR)
        if verbose or os.environ.get("KARMACTL_DEBUG"):
            import traceback

            traceback.print_exc()
        err(f"error: internal error: {type(exc).__name__}: {exc} (run with -v for details; this is a bug)")
        return 70


def _is_environment_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from, when a library wrapped it) is an environment
    error (:func:`_environment_cause`)."""
    return _environment_cause(exc) is not None


def _environment_cause(exc: BaseException | None) -> OSError | None:
    """The ``OSError`` that makes ``exc`` an environment error (exit 6): one of
    ``karmactl.store.fsio.ENVIRONMENT_ERRNOS`` (permission denied, read-only or full file system,
    path too long...), or any that names a path (a file or directory that cannot be read or
    written: gone because another program, e.g. ``git checkout``, changed the state directory
    meanwhile). Looked for in ``exc`` and what it was raised from."""
    from karmactl.store.fsio import is_environment_error

    seen = 0
    while exc is not None and seen < 10:
        if is_environment_error(exc) or (isinstance(exc, OSError) and exc.filename is not None):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def environment_message(exc: BaseException) -> str:
    """``<path>: <strerror>`` (``<path> -> <other path>: ...`` for a rename) of an environment error
    (:func:`_is_environment_error`), e.g. ``state/computed/works/x.json: No space left on device``."""
    exc = _environment_cause(exc)
    where = exc.filename if exc.filename is not None else "the state directory"
    if exc.filename2 is not None:
        where = f"{where} -> {exc.filename2}"
    return f"{os.fsdecode(where) if isinstance(where, bytes) else where}: {exc.strerror or exc}"


def _known_error_code(exc: Exception) -> int | None:
    """The exit code of karmactl's own error classes, looked up only in modules already imported (an
    exception of a module nobody imported cannot have been raised)."""
    from karmactl.cli.context import ExitCode

    for module, cls, code in (("karmactl.store.state", "InputError", ExitCode.INPUT_ERROR),
                              ("karmactl.store.fsio", "OutsideStateError", ExitCode.INPUT_ERROR),
                              ("karmactl.store.fsio", "RuntimeDirError", ExitCode.INPUT_ERROR),
                              ("karmactl.store.fsio", "StateLockedError", ExitCode.LOCKED),
                              ("karmactl.reconcile", "NotConvergedError", ExitCode.NOT_CONVERGED),
                              ("karmactl.members.detection", "DetectionCommandRefused", ExitCode.INPUT_ERROR)):
        mod = sys.modules.get(module)
        if mod is not None and isinstance(exc, getattr(mod, cls)):
            return int(code)
    return None
