"""Sub-command groups shared by several modules (``kgp llm``, ``kgp router``, ``kgp lab bench``).

A group may be filled by product modules and by the lab's commands (discovered through the
``kg_platform.cli`` entry-point group), whichever registers first; :func:`group` returns the
one already on the app or adds it, so no module needs to know which came first.
"""

from __future__ import annotations

import typer


def group(app: typer.Typer, name: str, help: str) -> typer.Typer:  # typer's word
    """The ``name`` sub-command group of ``app``, created with ``help`` when it is not there."""
    for info in app.registered_groups:
        if info.name == name and info.typer_instance is not None:
            return info.typer_instance
    sub = typer.Typer(help=help, no_args_is_help=True)
    app.add_typer(sub, name=name)
    return sub
