"""Every ``kgp`` command that takes ``--corpus`` refuses an empty or blank name the same way, at
parse time: exit 2, ``error: the corpus name '' is empty`` and a hint, nothing connected or
loaded. (``kgp router which --corpus ""`` used to exit 0, ``router show`` 1 with another message.)
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from kg_platform.cli.main import app, main


def _leaves(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from _leaves(sub, [*path, name])
    else:
        yield path, command


def _commands_with_corpus() -> list[tuple[list[str], Any]]:
    return [
        (path, cmd)
        for path, cmd in _leaves(typer.main.get_command(app), [])
        if any(p.name == "corpus" and p.param_type_name == "option" for p in cmd.params)
    ]


COMMANDS = _commands_with_corpus()


def test_the_product_commands_that_name_a_corpus_are_all_checked() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {
        "ingest",
        "retrieve",
        "ask",
        "distill",
        "runs list",
        "router show",
        "router which",
        "piece-graph rebuild",
        "piece-graph check",
    } <= names


@pytest.mark.parametrize("name", ["", "   "])
@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p))
def test_an_empty_corpus_is_refused_with_one_message(
    path: list[str], name: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    for env in ("NEO4J_URI", "NEO4J_PASSWORD", "KGP_NEO4J__URI"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("KGP_DATA_DIR", str(tmp_path / "data"))
    existing = tmp_path / "input.md"
    existing.write_text("# x\n\ntext\n", encoding="utf-8")
    cmd = dict((" ".join(p), c) for p, c in COMMANDS)[" ".join(path)]
    args = [*path]
    for param in cmd.params:
        if param.required and param.name != "corpus":
            value = str(existing)
            args += [value] if param.param_type_name == "argument" else [param.opts[0], value]
    monkeypatch.setattr(sys, "argv", ["kgp", *args, "--corpus", name])
    with pytest.raises(SystemExit) as done:
        main()
    err = capsys.readouterr().err
    assert done.value.code == 2, err
    assert err.startswith(f"error: the corpus name {name!r} is empty\n  hint: "), err
