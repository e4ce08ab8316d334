"""Fail when the package's structure drifts inside ``hunyuan_webui/``: an import cycle between
modules or between folders, a module that imports upward (:data:`LAYERS`, and inside ``service/``
and ``web/`` :data:`INNER_LAYERS`), a web module that reaches past the service's front door
(:data:`BEHIND_THE_DOOR`), an engine kind's name spelled as a string literal outside the files that
own the names (:data:`KIND_FILES`), a function over 60 lines or a module over 400 lines, and a
folder of ``service/`` with more than :data:`MAX_SERVICE_MODULES` modules (its ``__init__`` aside):
past that a subject has become several, and gets a folder of its own.

Every import counts, including those inside functions and under ``TYPE_CHECKING``: a module that
needs another only for type hints still depends on it, and a cycle of such needs is a circle a
reader has to hold in their head. Run ``python scripts/check_structure.py``; ``tests/fast/test_structure.py``
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
MAX_SERVICE_MODULES = 8

# The package's layers, bottom first. A unit (a folder of the package, or a module directly in it)
# imports only units of lower layers; units of one layer know nothing of each other (the engines,
# the model registry and the settings are built side by side from ``core``).
LAYERS: tuple[tuple[str, frozenset[str]], ...] = tuple((name, frozenset(units)) for name, units in (
    ("leaves", {"errors", "urls", "hub"}),
    ("plain values", {"core", "languages", "structured", "model_size", "cpu_formats", "tls"}),
    ("text tools", {"prompts", "segment", "detect", "cache", "notebook", "tool_prompts",
                    "romanize"}),
    ("engines, registry, settings", {"engine", "models", "settings", "files", "speech"}),
    ("demo models, modes", {"demo", "modes"}),
    ("service, launch choice", {"service", "choice", "demo_model", "speech_choice", "cli_help"}),
    ("edges", {"web", "library", "llama_cpp_setup"}),
    ("the app", {"app", "__init__"}),
    ("command line", {"__main__"}),
    ("launcher", {"entry"}),
))
# Inside a folder of the package, the same rule between its parts (a sub-package, or a module
# directly in it), bottom first. In the service, the answer checks know nothing of the translator,
# the front door sits on one translation, and the operations and the rooms are peers over it. In the web layer, the page, the protocols
# and the class pages are peers over the guards; ``api`` assembles them.
INNER_LAYERS: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {
    package: tuple((name, frozenset(units)) for name, units in layers)
    for package, layers in {
        "service": (
            ("answer checks", {"checks"}),
            ("one translation", {"translate"}),
            ("the front door", {"door"}),
            ("operations, rooms", {"operations", "rooms"}),
            ("a class spoken", {"speech"}),
            ("the service's exports", {"__init__"}),
        ),
        "web": (
            ("wire values", {"bodies", "fonts", "words"}),
            ("words in use", {"speech_words"}),
            ("responses", {"responses"}),
            ("guards", {"guards"}),
            ("request dependencies", {"deps"}),
            ("front ends", {"page", "protocols", "classroom"}),
            ("the app's routes", {"api"}),
            ("the package", {"__init__"}),
        ),
    }.items()
}
# The web layer translates through the service's front door (``Translator.translate_texts``): it
# does not import these modules (or their names through ``hunyuan_webui.service``), nor read a
# translator's ``.engine`` (``Translator.status()`` and ``count_tokens()`` say what it may know).
BEHIND_THE_DOOR = {
    "hunyuan_webui.service.door.longtext": {"LongText", "max_chars"},
    "hunyuan_webui.service.translate.job": {"Job", "batched_updates"},
}
# Where the engine kinds' names are written (the kinds themselves, and the managed servers, whose
# programs and Python packages the kinds are named after), and the words elsewhere that are spelled
# like a kind but name something else.
KINDS_MODULE = "core/kinds.py"
KIND_FILES = 2
NOT_KINDS = {
    "engine/process.py": {"process"},  # the status field with the engine process's id
    "web/protocols/openai/routes.py": {"openai"},  # the OpenAI protocol's tag in the OpenAPI schema
    "web/protocols/audio/routes.py": {"openai"},  # the same tag, on OpenAI's transcription route
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


def _from_base(node: ast.ImportFrom, name: str, path: Path) -> str:
    """The absolute module a ``from ... import`` reads from."""
    base = node.module or ""
    if node.level:
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    return base


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports (a submodule where one is named)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(_known_prefix(alias.name, known) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(node, name, path)
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


def unit(name: str, folder: str = "") -> str:
    """The folder (sub-package) or module directly in it that a module belongs to, at the
    package's top (``engine`` for ``hunyuan_webui.engine.remote.sse``, ``__init__`` for the package
    itself) or inside ``folder`` (``checks`` for ``hunyuan_webui.service.checks.watch``)."""
    parts = name.split(".")[1:]
    if folder:
        parts = parts[1:] if parts[:1] == [folder] else []
    return parts[0] if parts else "__init__"


def folder_graph(graph: dict[str, set[str]], folder: str = "") -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, targets in graph.items():
        here = unit(name, folder)
        out.setdefault(here, set()).update(unit(t, folder) for t in targets
                                           if unit(t, folder) != here)
    return out


def inside(graph: dict[str, set[str]], folder: str) -> dict[str, set[str]]:
    """The imports between the modules of one folder of the package."""
    prefix = f"{PACKAGE}.{folder}"
    mine = {n for n in graph if n == prefix or n.startswith(prefix + ".")}
    return {n: graph[n] & mine for n in mine}


def upward(graph: dict[str, set[str]],
           layers: tuple[tuple[str, frozenset[str]], ...] = LAYERS,
           folder: str = "") -> Iterator[str]:
    """Imports that do not point to a lower layer, and units placed in no layer (of the package's
    top, or inside ``folder``)."""
    rank = {u: i for i, (_, units) in enumerate(layers) for u in units}
    table = f"INNER_LAYERS[{folder!r}]" if folder else "LAYERS"
    for name in sorted({unit(n, folder) for n in graph} - set(rank)):
        where = f"{folder}/{name}" if folder else name
        yield f"{where}: in no layer (add it to {table} in scripts/check_structure.py)"
    for name, targets in sorted(graph.items()):
        for target in sorted(targets):
            a, b = unit(name, folder), unit(target, folder)
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


def reaches(known: dict[str, Path], root: Path = ROOT) -> set[str]:
    """Where a web module reaches past the service's front door (:data:`BEHIND_THE_DOOR`), a line
    each: the module and what it imports, or that it reads a translator's ``.engine``."""
    found: set[str] = set()
    service = f"{PACKAGE}.service"
    for name, path in known.items():
        if unit(name) != "web":
            continue
        rel = path.relative_to(root / PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = {(alias.name, "") for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = _from_base(node, name, path)
                targets = {(base, alias.name) for alias in node.names}
            else:
                if (isinstance(node, ast.Attribute) and node.attr == "engine"
                        and not (isinstance(node.value, ast.Name) and node.value.id == PACKAGE)):
                    found.add(f"{rel} reads the translator's .engine")
                continue
            for module, names in BEHIND_THE_DOOR.items():
                for base, alias in targets:
                    dotted = f"{base}.{alias}" if alias else base
                    if (dotted == module or dotted.startswith(module + ".")
                            or (base == service and alias in names)):
                        found.add(f"{rel} imports {module}")
    return found


def door_problems(known: dict[str, Path], root: Path = ROOT) -> Iterator[str]:
    """Every reach past the front door."""
    for line in sorted(reaches(known, root)):
        yield (f"past the service's front door: {line} (web/ translates through "
               "Translator.translate_texts)")


def crowded_folders(root: Path = ROOT) -> Iterator[str]:
    """Folders of ``service/`` holding more than :data:`MAX_SERVICE_MODULES` modules."""
    service = root / PACKAGE / "service"
    for folder in sorted({service, *(p.parent for p in service.rglob("*.py"))}):
        count = len([p for p in folder.glob("*.py") if p.name != "__init__.py"])
        if count > MAX_SERVICE_MODULES:
            yield (f"{folder.relative_to(root / PACKAGE)}/: {count} modules (at most "
                   f"{MAX_SERVICE_MODULES} a folder of service/: give a subject its own folder)")


def problems(root: Path = ROOT,
             layers: tuple[tuple[str, frozenset[str]], ...] = LAYERS,
             inner: dict[str, tuple[tuple[str, frozenset[str]], ...]] | None = None
             ) -> list[str]:
    known = modules(root)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    out = [f"import cycle: {' <-> '.join(c)}" for c in cycles(graph)]
    out.extend(f"folder import cycle: {' <-> '.join(c)}" for c in cycles(folder_graph(graph)))
    out.extend(upward(graph, layers))
    for folder, folder_layers in (INNER_LAYERS if inner is None else inner).items():
        part = inside(graph, folder)
        out.extend(f"folder import cycle in {folder}/: {' <-> '.join(c)}"
                   for c in cycles(folder_graph(part, folder)))
        if part:
            out.extend(upward(part, folder_layers, folder))
    out.extend(door_problems(known, root))
    out.extend(kind_literals(known, root))
    out.extend(long_units(known, root))
    out.extend(crowded_folders(root))
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    print(f"{len(found)} structure problem(s)" if found else "structure: OK")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
