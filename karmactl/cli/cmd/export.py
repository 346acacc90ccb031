"""``karmactl export --to-karmada DIR``: hand the fleet over to a real Karmada (DESIGN §6).

Writes into DIR the user's objects as karmada-apiserver takes them (``00-crds.yaml``,
``10-namespaces.yaml``, ``20-policies.yaml``, ``30-resources.yaml``), ``join.sh`` (``karmadactl
join`` per Cluster), the karmada-controller-manager flags (``karmada-controller-manager.flags``), the
karmada-scheduler flags when karmactl-config moves its feature gates (``karmada-scheduler.flags``) and
``REPORT.md`` listing every field a real Karmada would drop (translation:
:mod:`karmactl.api.export`). Exit 1 when something is lost, unless ``--allow-lossy``.

``--check`` dry-runs the export on a real API server that has Karmada's CRDs and puts the result in
the report: objects the server rejects, and fields its schema prunes (both exit 1). The server is
either

* started by karmactl (``--check-kube-apiserver PATH`` or ``KARMACTL_KUBE_APISERVER``: a
  kube-apiserver binary, with ``etcd`` on PATH) in a temporary directory, with Karmada's CRDs from
  ``--check-crds DIR`` (``KARMACTL_KARMADA_CRDS``; the ``crds`` of a Karmada release) installed,
  then stopped; the export's CRDs and Namespaces are really created there first, so everything else
  can be checked; or
* an existing one (``--check-kubeconfig FILE``), e.g. the karmada-apiserver you are moving to,
  whose Karmada CRDs are installed already: everything is only dry-run there, nothing is created.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode, err, out

CM_FLAGS_FILE = "karmada-controller-manager.flags"
SCHEDULER_FLAGS_FILE = "karmada-scheduler.flags"
KUBECTL_TIMEOUT = 300  # seconds for one kubectl call (a slow box installs 19 CRDs in well under this)


def register(app: typer.Typer) -> None:
    """Add ``export`` to the app."""

    @app.command()
    def export(ctx: typer.Context,
               to_karmada: Path = typer.Option(..., "--to-karmada", metavar="DIR",
                                               help="Write Karmada's objects, join.sh, flags and REPORT.md here."),
               check: bool = typer.Option(False, "--check", help="Dry-run the export on an API server with Karmada's CRDs."),
               check_kube_apiserver: Optional[str] = typer.Option(None, "--check-kube-apiserver", metavar="PATH",
                                                                  envvar="KARMACTL_KUBE_APISERVER",
                                                                  help="With --check: start this kube-apiserver binary."),
               check_crds: Optional[Path] = typer.Option(None, "--check-crds", metavar="DIR", envvar="KARMACTL_KARMADA_CRDS",
                                                         help="With --check-kube-apiserver: Karmada's CRD files."),
               check_kubeconfig: Optional[Path] = typer.Option(None, "--check-kubeconfig", metavar="FILE",
                                                               help="With --check: an existing server with Karmada's CRDs."),
               allow_lossy: bool = typer.Option(False, "--allow-lossy", help="Exit 0 although fields are dropped.")):
        """Hand the fleet to a real Karmada: objects, joins, controller flags, and what would be lost."""
        export_cmd(ctx.obj, to_karmada, check, check_kube_apiserver, check_crds, check_kubeconfig, allow_lossy)


def export_cmd(c: Context, target: Path, check: bool, kube_apiserver: str | None, crds: Path | None,
               kubeconfig: Path | None, allow_lossy: bool) -> None:
    """Export the state directory into ``target`` (the files are written in every case but bad input).

    Raises:
        InputError: the state directory does not load (exit 2).
        CLIError: bad flags, a target that is not an export directory, a check server that does
            not start (exit 2 or 3); after writing: the check server rejected objects, or something
            is lost without ``allow_lossy`` (exit 1, :attr:`ExitCode.LOSSY`).
    """
    from karmactl.api import export as E
    from karmactl.store import yamlio

    if check and bool(kube_apiserver) == bool(kubeconfig):
        raise CLIError("--check needs --check-kube-apiserver PATH (or KARMACTL_KUBE_APISERVER) or --check-kubeconfig FILE, "
                       "one of them")
    if check and kube_apiserver and (crds is None or not crds.is_dir()):
        raise CLIError("--check-kube-apiserver needs Karmada's CRDs: --check-crds DIR (or KARMACTL_KARMADA_CRDS), "
                       "e.g. the crds directory of a Karmada release")
    ex = E.translate(*_inputs(c))
    written = _write(target, ex, yamlio.dump_all)
    check_lines = None
    if check:
        check_lines, pruned, rejected = _check(target, ex, kube_apiserver, crds, kubeconfig)
        ex.lossy.extend(pruned)
    else:
        rejected = 0
    (target / "REPORT.md").write_text(E.report_markdown(ex, check_lines), encoding="utf-8")
    for lo in ex.lossy:
        err(f"lossy: {lo.what}{' (' + lo.where + ')' if lo.where else ''}: {lo.path}: {lo.why}")
    out(f"exported {written} object(s) and {len(ex.joins)} cluster join(s) to {target} (see {target / 'REPORT.md'})")
    if rejected:
        raise CLIError(f"the check server rejected {rejected} object(s) (see REPORT.md)", ExitCode.LOSSY)
    if ex.lossy and not allow_lossy:
        raise CLIError(f"{len(ex.lossy)} field(s) or setting(s) would be dropped by Karmada (see REPORT.md); "
                       f"--allow-lossy accepts that", ExitCode.LOSSY)


def _inputs(c: Context) -> tuple[list, dict]:
    """The user's objects as written (aliases not yet rewritten, no defaults) with ``file:line``,
    after the whole state directory loaded and validated; and each Cluster's access."""
    from karmactl.cli.stores import load_snapshot, store_of
    from karmactl.members.kubeconfig import AccessError, resolve_access
    from karmactl.reconcile import settings_of
    from karmactl.store.state import check_object

    store = store_of(c)
    snap = load_snapshot(c)
    settings_of(snap)
    objects, access = [], {}
    for path in store.user_files():
        rel = store.rel(path)
        for obj, _index, line in store.read_documents(path, rel):
            info = check_object(obj, snap.registry, rel, line)
            objects.append((obj, f"{rel}:{line}", info.namespaced))
            if info.group == "cluster.karmada.io" and info.kind == "Cluster":
                try:
                    acc = resolve_access(obj, store.root)
                    access[acc.cluster] = (tuple(str(Path(p).resolve()) for p in acc.paths), acc.context)
                except AccessError as exc:
                    raise CLIError(f"Cluster {obj['metadata']['name']} ({rel}:{line}): {exc}") from None
    return objects, access


def _write(target: Path, ex, dump_all) -> int:
    """Write the export's files into ``target`` (created; files of an earlier export replaced, the
    ones this export no longer has removed). Returns the number of objects written.

    Raises:
        CLIError: ``target`` holds files that are not an earlier export's.
    """
    from karmactl.api.export import FILES, join_script

    ours = {name for name, _ in FILES} | {"join.sh", "REPORT.md", CM_FLAGS_FILE, SCHEDULER_FLAGS_FILE}
    if target.exists():
        if not target.is_dir():
            raise CLIError(f"--to-karmada {target}: not a directory")
        foreign = sorted(p.name for p in target.iterdir() if p.name not in ours)
        if foreign:
            raise CLIError(f"--to-karmada {target}: the directory holds other files ({', '.join(foreign[:3])}); "
                           f"give an empty or new directory, or an earlier export")
    target.mkdir(parents=True, exist_ok=True)
    for name in ours:
        (target / name).unlink(missing_ok=True)
    for name, objs in ex.files.items():
        (target / name).write_text(dump_all(objs), encoding="utf-8")
    script = target / "join.sh"
    script.write_text(join_script(ex), encoding="utf-8")
    script.chmod(0o755)
    (target / CM_FLAGS_FILE).write_text("".join(f + "\n" for f in ex.controller_manager_flags), encoding="utf-8")
    if ex.scheduler_flags:
        (target / SCHEDULER_FLAGS_FILE).write_text("".join(f + "\n" for f in ex.scheduler_flags), encoding="utf-8")
    return sum(len(objs) for objs in ex.files.values())


# --------------------------------------------------------------------------- --check

def _check(target: Path, ex, kube_apiserver: str | None, crds: Path | None, kubeconfig: Path | None):
    """Dry-run the export; returns ``(report lines, pruned fields as Lossy, rejected object count)``."""
    if kubeconfig is not None:
        if not kubeconfig.is_file():
            raise CLIError(f"--check-kubeconfig {kubeconfig}: no such file")
        work = Path(tempfile.mkdtemp(prefix="karmactl-check-"))  # kubectl's cache only
        try:
            lines, pruned, rejected = _dry_run(target, ex, kubeconfig, work, create_first=False)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return [f"- server: {kubeconfig} (existing; nothing created)"] + lines, pruned, rejected
    from karmactl.emulator import local

    try:
        binary, etcd = local.check_binary(kube_apiserver), local.find_etcd()
    except local.LocalUsageError as exc:
        raise CLIError(str(exc).replace("--kube-apiserver", "--check-kube-apiserver")) from None
    work = Path(tempfile.mkdtemp(prefix="karmactl-check-"))
    try:
        err(f"check: starting kube-apiserver {binary} in {work}")
        try:
            local.start_real_member("karmada-check", work / "server", binary, etcd, nodes=0)
        except local.MemberStartError as exc:
            raise CLIError(f"the check server did not start: {exc}", ExitCode.MEMBER_FAILURE) from None
        kc = work / "server" / "kubeconfig"
        err(f"check: installing Karmada's CRDs from {crds}")
        res = _kubectl(kc, work, "apply", "--server-side", "-f", str(crds))
        if res.returncode == 0:
            res = _kubectl(kc, work, "wait", "--for", "condition=established", "crd", "--all", "--timeout=120s")
        if res.returncode != 0:
            raise CLIError(f"--check-crds {crds}: installing Karmada's CRDs failed: {res.stderr.strip()[-800:]}")
        lines, pruned, rejected = _dry_run(target, ex, kc, work, create_first=True)
        return [f"- server: kube-apiserver {binary} with Karmada's CRDs from {crds} (started for the check)"] + lines, \
            pruned, rejected
    finally:
        local.stop_real_member(work / "server")
        shutil.rmtree(work, ignore_errors=True)


def _kubectl(kubeconfig: Path, work: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise CLIError("--check needs kubectl on PATH")
    return subprocess.run([kubectl, "--kubeconfig", str(kubeconfig), "--cache-dir", str(work / "kubectl-cache"), *args],
                          capture_output=True, text=True, input=stdin, timeout=KUBECTL_TIMEOUT)


def _dry_run(target: Path, ex, kubeconfig: Path, work: Path, create_first: bool):
    """Apply each file with ``--dry-run=server`` (CRDs and Namespaces for real when ``create_first``);
    an object the server rejects is retried alone to name it. Client-side validation is off: the
    server's own schema decides, and what it prunes is compared with what was sent."""
    from karmactl.api.export import Lossy
    from karmactl.store import yamlio

    lines, pruned, rejected = [], [], 0
    for name, objs in ex.files.items():
        real = create_first and name in ("00-crds.yaml", "10-namespaces.yaml")
        args = ["apply", "--validate=false", "-o", "json", "-f", "-"] + ([] if real else ["--dry-run=server"])
        res = _kubectl(kubeconfig, work, *args, stdin=yamlio.dump_all(objs))
        if res.returncode == 0:
            returned = _items(res.stdout)
        else:
            returned = []
            for obj in objs:
                one = _kubectl(kubeconfig, work, *args, stdin=yamlio.dump_all([obj]))
                if one.returncode != 0:
                    rejected += 1
                    lines.append(f"- REJECTED {_what(obj)} (`{name}`): {one.stderr.strip()}")
                else:
                    returned.extend(_items(one.stdout))
        by_key = {_key(o): o for o in returned}
        for obj in objs:
            got = by_key.get(_key(obj))
            if got is None:
                continue
            for path in _pruned_paths(obj, got, ""):
                pruned.append(Lossy(_what(obj), name, path, "pruned by the API server: Karmada's CRD has no such field"))
        if real and name == "00-crds.yaml" and res.returncode == 0:
            _kubectl(kubeconfig, work, "wait", "--for", "condition=established", "crd", "--all", "--timeout=120s")
        accepted = len(objs) - sum(1 for line in lines if f"(`{name}`)" in line)
        lines.append(f"- `{name}`: {accepted}/{len(objs)} accepted ({'created' if real else 'dry run'})")
    return lines, pruned, rejected


def _items(stdout: str) -> list:
    try:
        doc = json.loads(stdout)
    except ValueError:
        return []
    return doc.get("items") or [] if doc.get("kind") == "List" else [doc]


def _key(obj: dict) -> tuple:
    md = obj.get("metadata") or {}
    return obj.get("kind"), md.get("namespace") or "", md.get("name")


def _what(obj: dict) -> str:
    kind, ns, name = _key(obj)
    return f"{kind} {ns + '/' if ns else ''}{name}"


def _pruned_paths(sent, got, path: str) -> list:
    """Dotted paths present (non-null) in ``sent`` but missing from ``got``."""
    found = []
    if isinstance(sent, dict) and isinstance(got, dict):
        for k, v in sent.items():
            if v is None:
                continue
            sub = f"{path}.{k}" if path else str(k)
            if k not in got:
                found.append(sub)
            else:
                found.extend(_pruned_paths(v, got[k], sub))
    elif isinstance(sent, list) and isinstance(got, list) and len(sent) == len(got):
        for i, (a, b) in enumerate(zip(sent, got)):
            found.extend(_pruned_paths(a, b, f"{path}[{i}]"))
    return found


__all__ = ["export_cmd", "register"]
