"""Fail when the package's structure drifts inside ``hunyuan_webui/``: an import cycle between
modules or between folders, a module that imports upward (:data:`LAYERS`), an engine kind's name
spelled as a string literal outside the files that own the names (:data:`KIND_FILES`), a function
over 60 lines or a module over 400 lines.

Every import counts, including those inside functions and under ``TYPE_CHECKING``: a module that
needs another only for type hints still depends on it, and a cycle of such needs is a circle a
reader has to hold in their head. Run ``python scripts/check_structure.py``; ``tests/test_structure.py``
runs it in the suite.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "hunyuan_webui"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400

# The package's layers, bottom first. A unit (a folder of the package, or a module directly in it)
# imports only units of lower layers; units of one layer know nothing of each other (the engines,
# the model registry and the settings are built side by side from ``core``).
LAYERS: tuple[tuple[str, frozenset[str]], ...] = tuple((name, frozenset(units)) for name, units in (
    ("leaves", {"errors", "urls"}),
    ("plain values", {"core", "languages", "structured", "romanize", "model_size", "cpu_formats"}),
    ("text tools", {"prompts", "segment", "detect", "cache", "notebook", "tool_prompts"}),
    ("engines, registry, settings", {"engine", "models", "settings", "files"}),
    ("demo models, modes", {"demo", "modes"}),
    ("service, launch choice", {"service", "choice", "demo_model"}),
    ("edges", {"web", "library", "llama_cpp_setup"}),
    ("the app", {"app", "__init__"}),
    ("command line", {"__main__"}),
    ("launcher", {"entry"}),
))
# Where the engine kinds' names are written (the kinds themselves, and the managed servers, whose
# programs and Python packages the kinds are named after), and the words elsewhere that are spelled
# like a kind but name something else.
KINDS_MODULE = "core/kinds.py"
KIND_FILES = 2
NOT_KINDS = {
    "engine/process.py": {"process"},  # the status field with the engine process's id
    "web/protocols/openai.py": {"openai"},  # the OpenAI protocol's tag in the OpenAPI schema
}


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports (a submodule where one is named)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(_known_prefix(alias.name, known) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                found.add(_known_prefix(f"{base}.{alias.name}", known))
    found.discard("")
    found.discard(name)
    return found


def _known_prefix(dotted: str, known: dict[str, Path]) -> str:
    parts = dotted.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return ""


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def long_units(known: dict[str, Path], root: Path = ROOT) -> Iterator[str]:
    for path in known.values():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        rel = path.relative_to(root)
        if lines > MAX_MODULE_LINES:
            yield f"{rel}: {lines} lines (at most {MAX_MODULE_LINES})"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    yield (f"{rel}:{node.lineno}: {node.name}() is {length} lines "
                           f"(at most {MAX_FUNCTION_LINES})")


def unit(name: str) -> str:
    """The folder (sub-package) or top-level module a module belongs to: ``engine`` for
    ``hunyuan_webui.engine.remote.sse``, ``__init__`` for the package itself."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, targets in graph.items():
        out.setdefault(unit(name), set()).update(unit(t) for t in targets if unit(t) != unit(name))
    return out


def upward(graph: dict[str, set[str]],
           layers: tuple[tuple[str, frozenset[str]], ...] = LAYERS) -> Iterator[str]:
    """Imports that do not point to a lower layer, and units placed in no layer."""
    rank = {u: i for i, (_, units) in enumerate(layers) for u in units}
    for name in sorted({unit(n) for n in graph} - set(rank)):
        yield f"{name}: in no layer (add it to LAYERS in scripts/check_structure.py)"
    for name, targets in sorted(graph.items()):
        for target in sorted(targets):
            a, b = unit(name), unit(target)
            if a == b or a not in rank or b not in rank or rank[b] < rank[a]:
                continue
            where = "the same layer" if rank[a] == rank[b] else "a higher layer"
            yield (f"upward import: {name} ({layers[rank[a]][0]}) imports {target} "
                   f"({where}: {layers[rank[b]][0]})")


def kind_names(root: Path = ROOT) -> set[str]:
    """The engine kinds' names: the string constants of ``core/kinds.py``."""
    path = root / PACKAGE / KINDS_MODULE
    if not path.is_file():
        return set()
    return {node.value.value for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)}


def kind_literals(known: dict[str, Path], root: Path = ROOT) -> Iterator[str]:
    """More than :data:`KIND_FILES` files spelling an engine kind's name as a literal."""
    names = kind_names(root)
    spelled: dict[str, set[str]] = {}
    for path in known.values():
        rel = path.relative_to(root / PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                                    | ast.AsyncFunctionDef)
                      and node.body and isinstance(node.body[0], ast.Expr)}
        words = {node.value for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and node.value in names
                 and id(node) not in docstrings} - NOT_KINDS.get(rel, set())
        if words:
            spelled[rel] = words
    if len(spelled) > KIND_FILES:
        listed = "; ".join(f"{rel} ({', '.join(sorted(w))})" for rel, w in sorted(spelled.items()))
        yield (f"engine kind names spelled as literals in {len(spelled)} files (at most "
               f"{KIND_FILES}; use hunyuan_webui.core.kinds): {listed}")


def problems(root: Path = ROOT,
             layers: tuple[tuple[str, frozenset[str]], ...] = LAYERS) -> list[str]:
    known = modules(root)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    out = [f"import cycle: {' <-> '.join(c)}" for c in cycles(graph)]
    out.extend(f"folder import cycle: {' <-> '.join(c)}" for c in cycles(folder_graph(graph)))
    out.extend(upward(graph, layers))
    out.extend(kind_literals(known, root))
    out.extend(long_units(known, root))
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    print(f"{len(found)} structure problem(s)" if found else "structure: OK")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
