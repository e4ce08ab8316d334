"""Fail when the package's structure drifts: an import cycle, a function over 60 lines or a module
over 400 lines inside ``hunyuan_webui/``.

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


def long_units(known: dict[str, Path]) -> Iterator[str]:
    for name, path in known.items():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        rel = path.relative_to(ROOT)
        if lines > MAX_MODULE_LINES:
            yield f"{rel}: {lines} lines (at most {MAX_MODULE_LINES})"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    yield (f"{rel}:{node.lineno}: {node.name}() is {length} lines "
                           f"(at most {MAX_FUNCTION_LINES})")


def problems(root: Path = ROOT) -> list[str]:
    known = modules(root)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    out = [f"import cycle: {' <-> '.join(c)}" for c in cycles(graph)]
    out.extend(long_units(known))
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    print(f"{len(found)} structure problem(s)" if found else "structure: OK")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
