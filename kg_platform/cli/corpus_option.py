"""One check of ``--corpus`` for every command, at parse time.

Why: commands read their corpus option in different ways (through the SDK, straight into a Cypher
parameter, or not until after loading a model), so an empty ``--corpus ""`` used to be refused by
some, searched by others and reported in different words. Every option named ``corpus`` of every
command, product or plug-in, is given the same check (:func:`kg_platform.corpus_name.check_corpus`)
before the command runs; its :class:`~kg_platform.errors.ConfigError` reaches ``kgp``'s error
handler (one line and a hint, exit 2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["guard_corpus_options"]


def _checked(previous: Callable[..., Any] | None) -> Callable[..., Any]:
    def callback(ctx: Any, param: Any, value: Any) -> Any:
        from kg_platform.corpus_name import check_corpus

        for name in value if isinstance(value, (list, tuple)) else [value]:
            if name is not None:
                check_corpus(name)
        return previous(ctx, param, value) if previous is not None else value

    return callback


def guard_corpus_options(command: Any) -> Any:
    """Give every ``corpus`` option under ``command`` (a click command or group, typer's own
    copy of click included, hence no isinstance checks) the corpus-name check; return it."""
    for param in command.params:
        if getattr(param, "param_type_name", "") == "option" and param.name == "corpus":
            param.callback = _checked(param.callback)
    for sub in getattr(command, "commands", {}).values():
        guard_corpus_options(sub)
    return command
