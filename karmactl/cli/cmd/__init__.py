"""The karmactl commands: one module per command (or per family a user sees as one command), each with
``register(app)``; :data:`karmactl.cli.app.COMMANDS` lists them all. A command module imports no other
command module; shared helpers live in ``karmactl/cli/``.

``get``, ``describe`` and ``reconcile`` run on the light path (:mod:`karmactl.cli.light`, no typer):
their modules import typer only inside ``register`` and so have no ``from __future__ import
annotations`` (typer reads the annotations of the functions ``register`` defines).
"""
