"""One access policy for every way in: the page's own endpoints are behind the same keys as the API.

Found in a security review: with ``--api-keys k1`` and no ``--auth``, gradio_client translated 20 of 20
requests through the page's ``/translate`` without a key, with no rate or character limit. Here
every way in is checked over real HTTP: the page and ``/gradio_api/*`` need a key unless a login
or ``--open-page`` opens them, a key's translations count wherever they come from, page visitors
have limits of their own, and a route added later is behind the keys too.
"""

from __future__ import annotations

import httpx
import pytest
from apphelpers import assert_json_error, free_port, running_app
from gradio_client import Client
from gradio_client.exceptions import AuthenticationError

from hunyuan_webui.app import Server, create_app
from hunyuan_webui.service import Translator
from hunyuan_webui.settings import Settings

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane


KEYS_APP_FILE = "page-rpm 3 0\npage-chars 0 30\n"  # keys_app (tests/http/conftest.py)


def test_the_page_endpoints_need_a_key_when_keys_are_configured(keys_app):
    """Found in review: with --api-keys k1 and no --auth, gradio_client translated 20 of 20
    requests without a key, with no rate or character limit."""
    with pytest.raises(AuthenticationError):
        Client(keys_app.url, verbose=False)
    with keys_app.client() as c:
        for method, path in [("GET", "/"), ("GET", "/config"), ("GET", "/gradio_api/info"),
                             ("POST", "/gradio_api/call/translate"),
                             ("POST", "/gradio_api/queue/join"), ("POST", "/gradio_api/upload")]:
            r = c.request(method, path, json={"data": ["谢谢你的帮助。", "zh", "en"]})
            assert "API key" in assert_json_error(r, 401, "unauthorized"), path
        r = c.get("/config", headers={"Authorization": "Bearer wrong"})
        assert_json_error(r, 401, "unauthorized")
        assert c.get("/health").status_code == 200  # information stays open


def test_gradio_client_with_a_key_counts_against_it(keys_app):
    client = Client(keys_app.url, verbose=False, headers={"Authorization": "Bearer page-rpm"})
    try:
        assert client.predict("谢谢你的帮助。", "zh", "en", api_name="/translate") == (
            "Thank you for your help.")
        with keys_app.client(headers={"Authorization": "Bearer page-rpm"}) as c:
            r = c.post("/v1/translate", json={"text": "谢谢。", "source_lang": "zh",
                                              "target_lang": "en"})
            assert r.status_code == 200  # the JSON API and the page share the key's minute
        assert client.predict("谢谢。", "zh", "en", api_name="/translate") == "Thank you."
        with pytest.raises(Exception, match="per minute"):
            client.predict("谢谢。", "zh", "en", api_name="/translate")
    finally:
        client.close()

    client = Client(keys_app.url, verbose=False, headers={"X-API-Key": "page-chars"})
    try:
        for _ in range(4):  # 4 x 7 characters of the key's 30 a day
            client.predict("谢谢你的帮助。", "zh", "en", api_name="/translate")
        with pytest.raises(Exception, match="Daily limit"):
            client.predict("谢谢你的帮助。", "zh", "en", api_name="/translate")
    finally:
        client.close()


def test_open_page_serves_browsers_without_a_key_but_limits_each_visitor(engine):
    with running_app(engine, api_keys="k1", open_page=True, visitor_rpm=2) as app:
        client = Client(app.url, verbose=False)
        try:
            for _ in range(2):
                assert client.predict("谢谢。", "zh", "en", api_name="/translate") == "Thank you."
            with pytest.raises(Exception, match="per minute for this visitor"):
                client.predict("谢谢。", "zh", "en", api_name="/translate")
        finally:
            client.close()
        with app.client() as c:  # the JSON API still needs its key
            r = c.post("/v1/translate", json={"text": "谢谢。", "target_lang": "en"})
            assert_json_error(r, 401, "unauthorized")


def test_with_a_login_the_page_needs_the_login_and_the_api_a_key(engine):
    with running_app(engine, api_keys="k1", auth="student:pw") as app:
        with pytest.raises(AuthenticationError):
            Client(app.url, verbose=False)
        client = Client(app.url, verbose=False, auth=("student", "pw"))
        try:
            assert client.predict("谢谢。", "zh", "en", api_name="/translate") == "Thank you."
        finally:
            client.close()
        with app.client() as c:
            assert_json_error(c.post("/v1/detect", json={"text": "hi"}), 401, "unauthorized")


def test_a_route_added_later_is_behind_the_keys_too(engine, demo_settings):
    settings = Settings(model=demo_settings.model, port=free_port(), api_keys="k1",
                        log_level="warning")
    app = create_app(settings, Translator(engine, engine.spec, settings))

    @app.get("/v1/extra")
    def extra() -> dict[str, str]:
        return {"secret": "yes"}

    app.router.routes.insert(0, app.router.routes.pop())  # ahead of the page mounted at "/"

    server = Server(app, settings).start()
    try:
        with httpx.Client(base_url=server.url, trust_env=False) as c:
            assert_json_error(c.get("/v1/extra"), 401, "unauthorized")
            r = c.get("/v1/extra", headers={"Authorization": "Bearer k1"})
            assert r.json() == {"secret": "yes"}
    finally:
        server.stop()
