"""Names that explain themselves, checked on the code as it is (issue 55, item 5).

- one name per concept: no public class or function is defined at the top of two modules of
  ``kg_platform`` (a reader who meets ``Candidate`` or ``load_model`` must not have to ask which);
- no public name shadows a builtin or a standard-library module (``tokenize``, ``types``...);
- no dead prompts: every prompt registered in ``kg_platform.llm.prompts`` is named by some
  module of the product or the lab;
- no paper symbols as setting names (``n_gra``, ``k_r``, ``lam_c``, ``t_graph``, ``tau``...):
  a user reads a setting's name before its description;
- the model of an LLM reply is not named like the platform's own result (``Answer``).
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import sys
from collections import defaultdict
from pathlib import Path

from kg_platform import settings_docs
from kg_platform.llm import PROMPTS

PACKAGE = Path(__file__).resolve().parents[2] / "kg_platform"
LAB = PACKAGE.parent / "lab" / "kg_platform_lab"

#: Modules whose public functions are named by what they are *for* the CLI (Typer commands and
#: ``register`` hooks, one per command module; ``cli/lazy.py`` defers the imports of the same
#: names), and ``main`` (the entry point of a ``python -m`` module).
COMMAND_PACKAGES = ("cli",)
ENTRY_POINTS = {"main"}

#: A second definition that stays for now, with the reason; the test fails when it is gone too,
#: so this list only shrinks.
KNOWN_TWINS: set[tuple[str, str]] = set()

#: Paper symbols and one-letter names (MoG's n_gra, k_r, T_graph, k_graph; the propagation
#: paper's lambda_*; SAGE's g, ss, l; tau, alpha...).
PAPER_SYMBOL = re.compile(
    r"^(n_gra|k_r|k_graph|t_graph|lam(bda)?_?\w*|alpha|beta|gamma|delta|tau|mu|sigma|ss|[a-z])$"
)
#: ``k``, the number of items returned, is the word every retrieval API uses (``retrieve.k``, the
#: request's ``k``), not a paper's symbol.
PLAIN_WORDS = {"k"}


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


@functools.lru_cache(maxsize=1)
def public_definitions() -> dict[str, list[str]]:
    """Public top-level class and function name -> the modules defining it."""
    defs: dict[str, list[str]] = defaultdict(list)
    for path in _modules(PACKAGE):
        rel = _rel(path)
        if rel.split("/")[1] in COMMAND_PACKAGES:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                if not node.name.startswith("_") and node.name not in ENTRY_POINTS:
                    defs[node.name].append(rel)
    return defs


def test_no_public_name_is_defined_in_two_modules() -> None:
    twins = {
        name: paths
        for name, paths in public_definitions().items()
        if len([p for p in paths if (name, p) not in KNOWN_TWINS]) > 1
    }
    assert twins == {}, "one name, two things (rename one, or import the other):\n" + "\n".join(
        f"  {name}: {', '.join(paths)}" for name, paths in sorted(twins.items())
    )


def test_the_known_twins_still_exist() -> None:
    """An entry of KNOWN_TWINS whose second definition is gone must leave the list."""
    defs = public_definitions()
    stale = sorted(f"{n} in {p}" for n, p in KNOWN_TWINS if p not in defs.get(n, []))
    assert stale == [], "remove from KNOWN_TWINS: " + ", ".join(stale)


def test_no_public_name_shadows_a_builtin_or_a_stdlib_module() -> None:
    reserved = set(sys.stdlib_module_names) | set(dir(builtins))
    shadows = sorted(
        f"{name} ({', '.join(paths)})"
        for name, paths in public_definitions().items()
        if name in reserved
    )
    assert shadows == [], "public names that shadow Python's own: " + "; ".join(shadows)


def _string_constants(paths: list[Path], skip: Path) -> set[str]:
    out: set[str] = set()
    for path in paths:
        if path == skip:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.add(node.value)
    return out


def test_every_prompt_has_a_user() -> None:
    """A prompt's name appears as a string in some module other than the registry (the call
    ``llm.structured("atomize", ...)``, ``get_prompt("decompose")``, a ``PROMPT = ...``)."""
    registry = PACKAGE / "llm" / "prompts.py"
    used = _string_constants(_modules(PACKAGE) + _modules(LAB), skip=registry)
    dead = sorted(name for name in PROMPTS if name not in used)
    assert dead == [], f"prompts nothing uses (remove them, or use them): {dead}"


def test_no_setting_is_named_by_a_paper_symbol() -> None:
    named = sorted(
        f"{section}.{name}" if section else name
        for section, _model, fields in settings_docs.sections()
        for name in fields
        if PAPER_SYMBOL.match(name) and name not in PLAIN_WORDS
    )
    assert named == [], f"settings named by a paper symbol (rename through config_moves): {named}"


def test_an_llm_reply_model_is_not_named_like_a_platform_result() -> None:
    import kg_platform
    from kg_platform.llm import replies

    models = {
        n
        for n, v in vars(replies).items()
        if isinstance(v, type) and v.__module__ == replies.__name__
    }
    assert "AnswerReply" in models  # the check reads the module it means
    assert models & set(kg_platform.__all__) == set()


def test_the_former_levels_name_still_works_with_a_warning(monkeypatch, tmp_path) -> None:
    """``segment.n_gra`` became ``segment.levels``: the former name sets it for one release, in
    the environment and in a job spec, and the warning names the replacement."""
    import pytest

    from kg_platform.config import Settings
    from kg_platform.config_moves import SettingMovedWarning
    from kg_platform.jobs.spec import load_spec

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KGP_CONFIG", raising=False)
    monkeypatch.delenv("KGP_SEGMENT__LEVELS", raising=False)
    monkeypatch.setenv("KGP_SEGMENT__N_GRA", "3")
    with pytest.warns(SettingMovedWarning, match=r"segment\.levels"):
        s = Settings()
    assert s.segment.levels == 3
    monkeypatch.delenv("KGP_SEGMENT__N_GRA")
    spec = tmp_path / "j.toml"
    spec.write_text('name = "j"\ncorpus = "c"\n[sources]\npaths = ["d"]\n[options]\nn_gra = 2\n')
    with pytest.warns(SettingMovedWarning, match="use levels"):
        assert load_spec(spec).options.levels == 2
