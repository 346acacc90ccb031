"""``karmactl set image``: change container images of workload templates in their files (kubectl
``pkg/cmd/set/set_image.go``); the next ``reconcile`` rolls the change out to the members."""
from __future__ import annotations

from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context


def parse_images(pairs: list[str]) -> dict[str, str]:
    """``NAME=IMAGE`` arguments -> ``{container name or "*": image}``.

    Raises:
        CLIError: an argument without ``=`` or with an empty side (exit 2).
    """
    images = {}
    for p in pairs:
        name, sep, image = p.partition("=")
        if not sep or not name or not image:
            raise CLIError(f'invalid image update "{p}": expected CONTAINER_NAME=CONTAINER_IMAGE')
        images[name] = image
    if not images:
        raise CLIError("at least one image update is required")
    return images


def set_image_cmd(c: Context, args: list[str], namespace: str, all_objects: bool, selector: Optional[str],
                  dry_run: bool) -> None:
    """Set the images ``NAME=IMAGE`` (``*`` = every container) of the named templates' containers and init
    containers; only the image lines change. kubectl's messages: ``<kind>/<name> image updated``, nothing
    when the images already are those.

    Raises:
        CLIError: no ``NAME=IMAGE``, a container name no container has (``unable to find container
            named "x"``), a kind without a Pod template (exit 2); objects not found (exit 1).
    """
    from karmactl.cli.template_edits import edit_templates, pod_spec

    split = next((i for i, a in enumerate(args) if "=" in a), len(args))
    resources, images = args[:split], parse_images(args[split:])

    def change(info, obj):
        spec = pod_spec(obj, (info.group, info.kind))
        if spec is None:
            raise CLIError(f"{info.kind}/{obj['metadata']['name']} the object is not a pod or does not have a pod "
                           f"template")
        containers = [ctr for field in ("initContainers", "containers") for ctr in spec.get(field) or []
                      if isinstance(ctr, dict)]
        for name, image in images.items():
            chosen = [ctr for ctr in containers if name == "*" or ctr.get("name") == name]
            if not chosen:
                raise CLIError(f'unable to find container named "{name}"')
            for ctr in chosen:
                ctr["image"] = image
        return obj

    edit_templates(c, resources, namespace, change, "image updated", dry_run, all_objects, selector)


def register(app: typer.Typer) -> None:
    """Add ``set image`` to the app."""
    set_app = typer.Typer(name="set", no_args_is_help=True, rich_markup_mode=None,
                          help="Set specific features on objects in the state directory (kubectl set).")

    @set_app.command("image", no_args_is_help=True)
    def image(ctx: typer.Context,
              args: List[str] = typer.Argument(..., metavar="(TYPE NAME | TYPE/NAME) CONTAINER=IMAGE..."),
              namespace: str = typer.Option("default", "-n", "--namespace"),
              all_objects: bool = typer.Option(False, "--all", help="Every object of the type (in the namespace)."),
              selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Objects matching a label selector."),
              dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change.")):
        """Update the image of a pod template (kubectl set image)."""
        set_image_cmd(ctx.obj, args, namespace, all_objects, selector, dry_run)

    app.add_typer(set_app)
