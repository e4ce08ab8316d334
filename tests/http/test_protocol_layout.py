"""Each protocol in three parts (schemas, the mapping onto the front door, thin routes), and every
route handler of the app a module-level function that reads the app from ``app.state``: no route
is a closure over a translator, so adding a protocol (or another app in the same process) never
means building routes inside a function."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import Any

from apphelpers import running_app
from fakes import InstantEngine
from fastapi.routing import APIRoute

from hunyuan_webui.web.protocols import PROTOCOLS

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS_DIR = ROOT / "hunyuan_webui" / "web" / "protocols"


def _routes(routes: list[Any]) -> Iterator[APIRoute]:
    """The app's own API routes, also those of included routers (not the page's, which Gradio
    mounts as an app of its own)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif hasattr(route, "original_router"):
            yield from _routes(route.original_router.routes)


def test_every_route_handler_is_a_module_level_function():
    with running_app(InstantEngine()) as app:
        routes = list(_routes(app.server.server.config.app.routes))
    paths = {r.path for r in routes}
    assert {"/v1/translate", "/v1/chat/completions", "/v2/translate", "/translate", "/imme",
            "/v2/document", "/v1/documents", "/v1/audio/transcriptions", "/health",
            "/fonts/{name}.ttf", "/class/api/rooms/{code}/speech",
            "/class/api/rooms"} <= paths, sorted(paths)
    for route in routes:
        endpoint = route.endpoint
        assert "<locals>" not in endpoint.__qualname__, (route.path, endpoint.__qualname__)
        assert endpoint.__module__.startswith("hunyuan_webui."), (route.path, endpoint)
        assert getattr(import_module(endpoint.__module__), endpoint.__name__) is endpoint


def test_each_protocol_is_its_schemas_its_mapping_and_its_routes():
    packages = sorted(p.name for p in PROTOCOLS_DIR.iterdir() if (p / "__init__.py").is_file())
    assert packages == ["audio", "deepl", "documents", "extensions", "libretranslate", "openai",
                        "v1"]
    for name in packages:
        modules = sorted(p.name for p in (PROTOCOLS_DIR / name).glob("*.py"))
        assert modules == ["__init__.py", "mapping.py", "routes.py", "schemas.py"], name
    # Every protocol's routes live in its routes module (ops: one module, it maps nothing).
    for protocol in PROTOCOLS:
        for route in _routes(protocol.routes.routes):
            module = route.endpoint.__module__
            assert module.endswith(".routes") or module.endswith(".ops"), (protocol.name, module)
