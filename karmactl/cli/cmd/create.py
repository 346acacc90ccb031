"""``karmactl create namespace|configmap|secret generic|deployment``: an object from kubectl's generators
(kubectl ``pkg/cmd/create``), appended to the state directory."""
from __future__ import annotations

from contextlib import nullcontext
from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, ExitCode
from karmactl.cli.printers import print_one


def _from_sources(literals: list[str], files: list[str], env_files: list[str], what: str) -> dict[str, str]:
    """kubectl's ``--from-literal k=v``, ``--from-file [key=]path`` (a directory: each regular file) and
    ``--from-env-file path`` (``KEY=VALUE`` lines) -> ``{key: text}``.

    Raises:
        CLIError: a malformed source, an unreadable file, a key given twice.
    """
    from pathlib import Path

    data: dict[str, str] = {}

    def put(k: str, v: str, origin: str) -> None:
        if not k:
            raise CLIError(f"{origin}: the key is empty")
        if k in data:
            raise CLIError(f'cannot add key "{k}", another key by that name already exists in {what}')
        data[k] = v

    for lit in literals:
        if "=" not in lit:
            raise CLIError(f'invalid --from-literal "{lit}": expected KEY=VALUE')
        k, v = lit.split("=", 1)
        put(k, v, f"--from-literal {lit}")
    for spec in files:
        key, _, path = spec.partition("=") if "=" in spec else ("", "", spec)
        p = Path(path)
        entries = sorted(f for f in p.iterdir() if f.is_file()) if p.is_dir() and not key else [p]
        for f in entries:
            try:
                put(key or f.name, f.read_text(encoding="utf-8"), f"--from-file {spec}")
            except (OSError, UnicodeDecodeError) as exc:
                raise CLIError(f"--from-file {spec}: cannot read {f}: {exc}") from None
    for path in env_files:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise CLIError(f"--from-env-file {path}: {exc.strerror}") from None
        for n, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if "=" not in line:
                raise CLIError(f"--from-env-file {path}:{n}: expected KEY=VALUE")
            k, v = line.split("=", 1)
            put(k.strip(), v, f"--from-env-file {path}:{n}")
    return data


def generate(kind: str, name: str, namespace: str, literals=(), files=(), env_files=(), secret_type: str = "Opaque",
             image: Optional[str] = None, replicas: int = 1, port: Optional[int] = None) -> dict:
    """The object kubectl's ``create <kind>`` generators make: ``namespace``, ``configmap``,
    ``secret generic`` (values base64-encoded into ``data``), ``deployment`` (label ``app: NAME``, one
    container named after the image). Files are read as UTF-8 text.

    Raises:
        CLIError: bad sources or a missing ``--image``.
    """
    import base64

    meta = {"name": name}
    if kind == "namespace":
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
    meta["namespace"] = namespace
    if kind == "configmap":
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                "data": _from_sources(list(literals), list(files), list(env_files), "config map")}
    if kind == "secret":
        data = _from_sources(list(literals), list(files), list(env_files), "secret")
        return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": secret_type,
                "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}
    if kind == "deployment":
        if not image:
            raise CLIError("required flag(s) \"image\" not set")
        container = {"name": image.split("/")[-1].split(":")[0].split("@")[0], "image": image}
        if port is not None:
            container["ports"] = [{"containerPort": port}]
        labels = {"app": name}
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": dict(meta, labels=labels),
                "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}}}}
    raise CLIError(f'unknown generator "{kind}"')


def create_cmd(c: Context, obj: dict, dry_run: bool, output: Optional[str], wrote_namespace: bool = False) -> None:
    """Store a generated object at its canonical path (``apply``'s layout); an existing one is an error
    (kubectl ``create``). ``--dry-run -o yaml`` prints it without storing, kubectl's everyday idiom.
    ``namespace: default`` is printed and stored only with ``-n default`` (``wrote_namespace``), as
    kubectl prints it.

    Raises:
        CLIError: the object exists (exit 1), or it is invalid (exit 2).
    """
    from karmactl.cli.printers import kind_prefix
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import Source, StateStore, key_of

    with state_lock(c.state) if not dry_run else nullcontext():
        store = StateStore(c.state)
        index = edit.index_user_objects(store) if c.state.is_dir() else {}
        info = store.registry.for_object(obj["apiVersion"], obj["kind"])
        normalize_object(obj, Source("<generated>", 0, 1), store.registry, strict=True)
        key = key_of(obj)
        if key in index:
            raise CLIError(f'Error from server (AlreadyExists): {info.resource_ref} "{key[3]}" already exists',
                           ExitCode.NOT_FOUND)
        if not dry_run:
            edit.append_new(store, info, obj, wrote_namespace)
            edit.stamp_creation(store, key, obj, c.now)
    print_one(c, info, edit.as_written(obj, wrote_namespace), output, f"{kind_prefix(info)}/{key[3]} created{' (dry run)' if dry_run else ''}")


def register(app: typer.Typer) -> None:
    """Add ``create`` and its generators to the app."""
    create_app = typer.Typer(no_args_is_help=True, help="Create an object in the state directory with kubectl's generators.")
    app.add_typer(create_app, name="create")
    create_secret = typer.Typer(no_args_is_help=True, help="Create a Secret.")
    create_app.add_typer(create_secret, name="secret")

    @create_app.command("namespace")
    def create_namespace(ctx: typer.Context, name: str = typer.Argument(...),
                         dry_run: bool = typer.Option(False, "--dry-run", help="Only print the object."),
                         output: Optional[str] = typer.Option(None, "-o", "--output", help="yaml, json, name...")):
        """Create a Namespace (kubectl create namespace)."""
        create_cmd(ctx.obj, generate("namespace", name, ""), dry_run, output)

    @create_app.command("configmap")
    def create_configmap(ctx: typer.Context, name: str = typer.Argument(...),
                         namespace: Optional[str] = typer.Option(None, "-n", "--namespace", help="The namespace (default: default)."),
                         from_literal: Optional[List[str]] = typer.Option(None, "--from-literal", help="KEY=VALUE (repeatable)."),
                         from_file: Optional[List[str]] = typer.Option(None, "--from-file", help="[KEY=]PATH, a file or directory (repeatable)."),
                         from_env_file: Optional[List[str]] = typer.Option(None, "--from-env-file", help="A file of KEY=VALUE lines (repeatable)."),
                         dry_run: bool = typer.Option(False, "--dry-run", help="Only print the object."),
                         output: Optional[str] = typer.Option(None, "-o", "--output", help="yaml, json, name...")):
        """Create a ConfigMap from literals, files or env files (kubectl create configmap)."""
        create_cmd(ctx.obj, generate("configmap", name, namespace or "default", from_literal or [], from_file or [],
                                     from_env_file or []), dry_run, output, namespace is not None)

    @create_secret.command("generic")
    def create_secret_generic(ctx: typer.Context, name: str = typer.Argument(...),
                              namespace: Optional[str] = typer.Option(None, "-n", "--namespace", help="The namespace (default: default)."),
                              from_literal: Optional[List[str]] = typer.Option(None, "--from-literal", help="KEY=VALUE (repeatable)."),
                              from_file: Optional[List[str]] = typer.Option(None, "--from-file", help="[KEY=]PATH (repeatable)."),
                              from_env_file: Optional[List[str]] = typer.Option(None, "--from-env-file", help="KEY=VALUE lines (repeatable)."),
                              secret_type: str = typer.Option("Opaque", "--type", help="The Secret's type."),
                              dry_run: bool = typer.Option(False, "--dry-run", help="Only print the object."),
                              output: Optional[str] = typer.Option(None, "-o", "--output", help="yaml, json, name...")):
        """Create a generic Secret from literals, files or env files (kubectl create secret generic)."""
        create_cmd(ctx.obj, generate("secret", name, namespace or "default", from_literal or [], from_file or [],
                                     from_env_file or [], secret_type), dry_run, output, namespace is not None)

    @create_app.command("deployment")
    def create_deployment(ctx: typer.Context, name: str = typer.Argument(...),
                          namespace: Optional[str] = typer.Option(None, "-n", "--namespace", help="The namespace (default: default)."),
                          image: Optional[str] = typer.Option(None, "--image", help="The container image (required)."),
                          replicas: int = typer.Option(1, "-r", "--replicas"),
                          port: Optional[int] = typer.Option(None, "--port", help="The container port."),
                          dry_run: bool = typer.Option(False, "--dry-run", help="Only print the object."),
                          output: Optional[str] = typer.Option(None, "-o", "--output", help="yaml, json, name...")):
        """Create a Deployment running one image (kubectl create deployment)."""
        create_cmd(ctx.obj, generate("deployment", name, namespace or "default", image=image, replicas=replicas,
                                     port=port), dry_run, output, namespace is not None)
