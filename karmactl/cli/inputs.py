"""Objects from the files, directories, URLs and stdin given with ``-f`` (``apply``, ``delete``),
as kubectl's ``resource.Builder`` reads them."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from karmactl.cli.context import err
from karmactl.store.state import InputError, parse_documents


URL_TIMEOUT = 30.0  # seconds for `apply -f URL`, as kubectl's default request timeout is unbounded


def _fetch(url: str) -> str:
    """The body of ``apply -f URL`` (kubectl reads manifests from http(s) URLs), at most
    ``yamlio.MAX_INPUT_BYTES``, as UTF-8 text.

    Raises:
        InputError: the server cannot be reached or answers with an error (status named).
    """
    import urllib.error
    import urllib.request

    from karmactl.store import yamlio

    try:
        with urllib.request.urlopen(url, timeout=URL_TIMEOUT) as resp:  # noqa: S310 - a user-given URL, as kubectl
            data = resp.read(yamlio.MAX_INPUT_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise InputError(f"unable to read URL, server reported {exc.code} {exc.reason}", url) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise InputError(f"unable to read URL: {getattr(exc, 'reason', exc)}", url) from None
    try:
        return yamlio.decode_input(data, url)
    except yamlio.YAMLSyntaxError as exc:
        raise InputError(str(exc), url, exc.line) from None


# the file names kustomize reads a kustomization from (``konfig.RecognizedKustomizationFileNames``)
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def kustomize(directory: str) -> str:
    """The objects ``kubectl kustomize DIR`` builds from a kustomization (its load restrictions and no
    plugins: kubectl's defaults), as one YAML text.

    Raises:
        CLIError: no kubectl on PATH (exit 6), or kustomize's error (exit 2, its message).
    """
    import shutil
    import subprocess

    from karmactl.cli.context import CLIError, ExitCode

    binary = shutil.which("kubectl")
    if binary is None:
        raise CLIError("apply -k builds the kustomization with `kubectl kustomize`, and kubectl is not on PATH "
                       "(install kubectl, or build it yourself: kustomize build DIR | karmactl apply -f -)",
                       ExitCode.ENVIRONMENT)
    if not os.path.isdir(directory):
        raise CLIError(f'must build at directory: not a valid directory: "{directory}"')
    proc = subprocess.run([binary, "kustomize", directory], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=300)
    if proc.returncode != 0:
        raise CLIError(f"kustomize {directory}: {proc.stderr.strip().removeprefix('error: ')}")
    return proc.stdout


def read_inputs(paths: list[str], recursive: bool, errors: list | None = None,
                kustomize_dir: str | None = None) -> list[tuple[dict, str, int, int]]:
    """Objects from files, directories or stdin, and what ``kubectl kustomize`` builds from
    ``kustomize_dir``: ``[(obj, display, doc_index, line)]``. A kustomization file met in a directory is
    skipped with a note (it is an input of kustomize, not an object: ``apply -k``).

    With an ``errors`` list, a file that cannot be read or parsed is recorded there and the
    others are still read (``apply`` reports every bad file of a directory); without one the
    first raises.

    Raises:
        InputError: unreadable or malformed inputs (without ``errors``).
    """
    from karmactl.store import yamlio

    found = []

    def parse(text: str, display: str) -> None:
        try:
            found.extend((o, display, i, ln) for o, i, ln in parse_documents(text, display))
        except InputError as exc:
            if errors is None:
                raise
            errors.append(exc)

    if kustomize_dir is not None:
        parse(kustomize(kustomize_dir), f"{kustomize_dir} (kustomize)")
    for p in paths:
        if p.startswith(("http://", "https://")):
            parse(_fetch(p), p)
            continue
        if p == "-":
            data = sys.stdin.buffer.read(yamlio.MAX_INPUT_BYTES + 1)
            try:
                text = yamlio.decode_input(data)
            except yamlio.YAMLSyntaxError as exc:
                raise InputError(str(exc), "<stdin>", exc.line) from None
            parse(text, "<stdin>")
            continue
        path = Path(p)
        if path.is_dir():
            files = sorted(f for f in (path.rglob("*") if recursive else path.glob("*"))
                           if f.is_file() and f.suffix in (".yaml", ".yml", ".json") and not f.name.startswith("."))
            for f in [f for f in files if f.name in KUSTOMIZATION_FILES]:
                err(f"note: {f} skipped: a kustomization is built, not applied (apply -k {f.parent})")
            files = [f for f in files if f.name not in KUSTOMIZATION_FILES]
        elif os.path.lexists(path):
            files = [path]
        else:
            raise InputError("the path does not exist", p)
        for f in files:
            try:
                text = yamlio.read_input_file(f)
            except (OSError, yamlio.YAMLSyntaxError) as exc:
                if isinstance(exc, OSError):
                    parse_error = InputError(f"cannot read file: {exc.strerror or exc}", str(f))
                else:
                    parse_error = InputError(str(exc), str(f), exc.line)
                if errors is None:
                    raise parse_error from None
                errors.append(parse_error)
                continue
            parse(text, str(f))
    return found
