"""--https: a self-signed certificate made at first start (kept, and reused), or the user's own;
the page, the API and the teacher's microphone (wss://) over TLS, checked against that very
certificate by real clients."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
from cryptography import x509
from websockets.sync.client import connect

from hunyuan_webui import tls
from hunyuan_webui.app import Server, _report_tls, create_app
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.errors import InputError
from hunyuan_webui.service import Translator
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech import Speech
from hunyuan_webui.urls import free_port


@pytest.fixture
def state(tmp_path, monkeypatch) -> Iterator:
    monkeypatch.setenv("HYMT_STATE_DIR", str(tmp_path))
    yield tmp_path


def serve(engine, demo_settings: Settings, **overrides) -> Server:
    settings = replace(demo_settings, port=free_port(), log_level="warning", **overrides)
    translator = Translator(engine, engine.spec, settings, cache=PhraseCache(size=16))
    return Server(create_app(settings, translator, speech=Speech.off("off")), settings).start()


def test_first_start_makes_a_certificate_kept_for_the_next(engine, demo_settings, state,
                                                           capsys) -> None:
    server = serve(engine, demo_settings, https=True)
    try:
        assert server.url.startswith("https://")
        cert = state / "tls" / "cert.pem"
        assert server.tls == (cert, state / "tls" / "key.pem")
        assert oct((state / "tls" / "key.pem").stat().st_mode & 0o777) == "0o600"
        loaded = x509.load_pem_x509_certificate(cert.read_bytes())
        san = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert "localhost" in san.get_values_for_type(x509.DNSName)
        assert "127.0.0.1" in {str(i) for i in san.get_values_for_type(x509.IPAddress)}
        context = ssl.create_default_context(cafile=str(cert))
        with httpx.Client(verify=context) as client:
            assert client.get(f"{server.url}/health").status_code == 200
            room = client.post(f"{server.url}/class/api/rooms", json={"lang": "zh"}).json()
            assert room["teacher_url"].startswith("https://")
        url = server.url.replace("https://", "wss://") + \
            f"/class/api/rooms/{room['code']}/speech?key={room['key']}&session=abcdefgh12"
        with connect(url, ssl=context, open_timeout=30) as ws:  # the microphone over TLS
            said = json.loads(ws.recv(timeout=30))  # (no recogniser here: refused, with words)
            assert said["type"] == "error" and "not available" in said["message"]
        _report_tls(server, replace(demo_settings, https=True))
        assert tls.fingerprint(cert) in capsys.readouterr().out
        made = cert.read_bytes()
    finally:
        server.stop()
    again = serve(engine, demo_settings, https=True)  # the next start: the same certificate
    try:
        assert cert.read_bytes() == made
    finally:
        again.stop()


def test_your_own_certificate(engine, demo_settings, tmp_path) -> None:
    cert, key = tls.self_signed(tmp_path / "mine")
    server = serve(engine, demo_settings, ssl_certfile=str(cert), ssl_keyfile=str(key))
    try:
        assert server.tls == (cert, key) and server.url.startswith("https://")
        with httpx.Client(verify=ssl.create_default_context(cafile=str(cert))) as client:
            assert client.get(f"{server.url}/health").status_code == 200
    finally:
        server.stop()


def test_a_certificate_without_its_key_is_refused() -> None:
    with pytest.raises(InputError, match="go together"):
        Settings(ssl_certfile="/tmp/cert.pem")
