"""The package's layering: the product never needs the lab, and no module imports itself back.

Both checks read the code as it is, so a new upward import or cycle fails here with its path:
- every product module imports in a fresh interpreter where ``kg_platform.lab`` cannot be
  imported at all (a meta-path blocker), and ``kgp --help`` still lists the product commands;
- the import graph of ``kg_platform`` (module-level and function-level imports, not those under
  ``TYPE_CHECKING``) has no cycle, and every import points down the layers of
  ``docs/architecture.md``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import kg_platform

PACKAGE = Path(kg_platform.__file__).resolve().parent
LAB = "kg_platform.lab"

BLOCKED_CHILD = r"""
import importlib, json, pkgutil, sys
from importlib.abc import MetaPathFinder

class NoLab(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "kg_platform.lab" or name.startswith("kg_platform.lab."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None

sys.meta_path.insert(0, NoLab())
import kg_platform
failed = {}
names = [m.name for m in pkgutil.walk_packages(kg_platform.__path__, "kg_platform.")
         if not (m.name == "kg_platform.lab" or m.name.startswith("kg_platform.lab."))]
for name in names:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
from kg_platform.cli.main import app
commands = sorted([c.name for c in app.registered_commands] +
                  [g.name for g in app.registered_groups])
print(json.dumps({"imported": len(names), "failed": failed, "commands": commands}))
"""


def test_every_product_module_imports_without_the_lab() -> None:
    out = subprocess.run(
        [sys.executable, "-c", BLOCKED_CHILD], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["imported"] > 50
    assert result["failed"] == {}, "product modules that need the lab:\n" + "\n".join(
        f"  {k}: {v}" for k, v in result["failed"].items()
    )
    assert {"ingest", "retrieve", "ask", "neo4j", "jobs"} <= set(result["commands"])
    assert "eval" not in result["commands"]  # a lab command: absent without the lab


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST, modules: set[str]) -> set[str]:
    """Modules of ``kg_platform`` imported anywhere in ``tree`` except under TYPE_CHECKING."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.add(child.module)
                found.update(f"{child.module}.{a.name}" for a in child.names)
            visit(child)

    visit(tree)
    return {m for m in found if m in modules}


def import_graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    return {
        name: _imports(ast.parse(path.read_text(encoding="utf-8")), modules) - {name}
        for name, path in files.items()
    }


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return cycles


def test_cycle_finder_finds_a_cycle() -> None:
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


# Cycles known and accepted (none). Router training, which runs the MoG/MoGG strategies, lives in
# the lab (kg_platform.lab.routers.training), so retrieval/router.py no longer imports them.
PENDING_CYCLES: list[list[str]] = []


def test_no_import_cycle_in_kg_platform() -> None:
    cycles = find_cycles(import_graph())
    assert cycles == PENDING_CYCLES, "import cycles:\n" + "\n".join(
        "  " + " <-> ".join(c) for c in cycles
    )


# Lower layers first; a module may import its own layer and the ones before it (the data's path,
# docs/architecture.md). ``browser`` holds the guide's static assets, installed by the server.
LAYERS = [
    {"<root>", "errors", "config", "corpus_name", "qa_file", "tokens", "_process", "_faults"},
    {"browser"},
    {"neo4j_server"},
    {"graph", "embedding"},
    {"llm", "parsing"},
    {"segmenting", "granularity"},
    {"distilling"},
    {"ingest"},
    {"retrieval"},
    {"reasoning"},
    {"jobs"},
    {"sdk"},
    {"cli", "integrations", "demo", "serve"},
    {"lab"},
]


def _layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "<root>"
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"{module}: package {top!r} is in no layer of LAYERS")


def test_imports_point_down_the_layers() -> None:
    upward = sorted(
        f"{m} -> {d}" for m, deps in import_graph().items() for d in deps if _layer(d) > _layer(m)
    )
    assert upward == [], "upward imports:\n" + "\n".join("  " + u for u in upward)


def test_the_product_imports_nothing_from_the_lab() -> None:
    upward = {
        m: sorted(d for d in deps if d == LAB or d.startswith(LAB + "."))
        for m, deps in import_graph().items()
        if not (m == LAB or m.startswith(LAB + "."))
    }
    assert {m: d for m, d in upward.items() if d} == {}
