"""Hostile packages while other clients are served (issue 32, item 8: each case above, under the
load of other clients).

Four clients translate demo phrases on ``/v1/translate`` (greedy: each answer is known exactly)
while ``/v1/documents`` and DeepL's ``/v2/document`` get every bomb and lie of :mod:`bombs`, then
packages Hypothesis makes out of real ones: a part inflated with repeated markup, parts added by
the thousand, a name that leaves the package or repeats, a DOCTYPE, deep nesting, a size the
directory lies about, a foreign compression method, truncation, flipped bytes. Every answer is
202 or a 4xx with words (never a 5xx or a trace), within a bound; a document that was accepted
ends ``done`` or ``error`` with words; the translating clients' answers stay exact, and none of
them fails.
"""

from __future__ import annotations

import io
import struct
import threading
import time
import zipfile
from collections.abc import Iterable

import bombs
import httpx
import pytest
from apphelpers import machine_stalls, running_app, wait_until
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hunyuan_webui.demo_model import load_phrases

pytestmark = pytest.mark.slow  # a model, a server: not the fast lane

MB = 1_000_000
CLIENTS = 4
ANSWER_BOUND_S = 5.0  # a refusal under this load (tests/test_package_bombs.py: 2 s unloaded)
MAX_EXAMPLES = 40


@pytest.fixture(scope="module")
def app(engine):
    with running_app(engine, cache_size=0) as running:  # no cache: every phrase is decoded
        yield running


class Translating:
    """``CLIENTS`` threads translating short demo phrases until stopped; every answer kept."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.phrases = [p for p in load_phrases() if len(p.source) <= 12][:24]
        self.answers: list[tuple[str, int, str]] = []  # (expected, status, translation)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True)
                         for i in range(CLIENTS)]

    def __enter__(self) -> Translating:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=120)

    def _run(self, offset: int) -> None:
        with httpx.Client(base_url=self.url, trust_env=False, timeout=120) as c:
            i = offset
            while not self._stop.is_set():
                p = self.phrases[i % len(self.phrases)]
                i += CLIENTS
                r = c.post("/v1/translate", json={
                    "text": p.source, "source_lang": p.source_lang,
                    "target_lang": p.target_lang, "options": {"deterministic": True}})
                got = r.json().get("translation", "") if r.status_code == 200 else r.text
                self.answers.append((p.target, r.status_code, got))

    def check(self) -> None:
        assert len(self.answers) >= CLIENTS, "the clients were not served"
        wrong = [a for a in self.answers if a[1] != 200 or a[0] != a[2]]
        assert not wrong, wrong[:5]


def send(c: httpx.Client, route: str, name: str, data: bytes) -> httpx.Response:
    fields = {"target_lang": "EN-US" if route == "/v2/document" else "en"}
    started = time.monotonic()
    answer = c.post(route, data=fields, files={"file": (name, data)})
    elapsed = time.monotonic() - started
    assert answer.status_code in (202, 200, 400, 413, 429), (answer.status_code, answer.text)
    assert "Traceback" not in answer.text and 'File "' not in answer.text
    if answer.status_code >= 400:
        body = answer.json()
        message = body.get("message") or body["error"]["message"]
        assert isinstance(message, str) and len(message) > 10, body
    assert elapsed < ANSWER_BOUND_S, (elapsed, answer.text[:200])
    return answer


def settle(c: httpx.Client, route: str, answer: httpx.Response) -> None:
    """An accepted document ends done or in an error with words (then it is forgotten)."""
    if answer.status_code not in (200, 202):
        return
    if route == "/v1/documents":
        doc = answer.json()["id"]

        def status() -> dict:
            return c.get(f"/v1/documents/{doc}").json()
    else:  # DeepL's handle, read on DeepL's own status route
        handle = answer.json()

        def status() -> dict:
            return c.post(f"/v2/document/{handle['document_id']}",
                          data={"document_key": handle["document_key"]}).json()

    ended = wait_until(lambda: (lambda s: s if s["status"] in ("done", "error") else None)(
        status()), 120)
    assert ended, "an accepted document did not end"
    assert ended["status"] == "done" or len(ended.get("error") or
                                             ended.get("error_message") or "") > 10, ended
    if route == "/v1/documents":
        c.delete(f"/v1/documents/{doc}")


def test_every_bomb_and_lie_while_others_translate(app):
    with Translating(app.url) as translating, machine_stalls(), \
            httpx.Client(base_url=app.url, trust_env=False, timeout=60) as c:
        for ext in bombs.KINDS:
            for make in [*bombs.BOMBS.values(), *bombs.LIES.values()]:
                for route in ("/v1/documents", "/v2/document"):
                    answer = send(c, route, "lesson" + ext, make(ext))
                    assert answer.status_code in (400, 413), answer.text
    translating.check()


# -- packages Hypothesis makes -----------------------------------------------------------------------
UNITS = [b"<a/>", b"<w:p/>", b"\0", b"x", b"<p:sp/>"]
NAMES = ["../x", "/abs.xml", "a\\b.xml", "C:/x.xml", "ok/../../x", "word/document.xml",
         "[Content_Types].xml", "bomb/part.xml", "media/image1.png"]
DOCTYPES = [bombs.BILLION_LAUGHS, b'<!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]>',
            b"<!DOCTYPE html>"]


def _mutate(data: bytes, kind: str, draw) -> bytes:
    if kind == "inflate":
        unit, size = draw(st.sampled_from(UNITS)), draw(st.sampled_from([1, 3, 8, 30, 70])) * MB
        return bombs.rebuild(data, extra=[(draw(st.sampled_from(NAMES[5:])) + "x",
                                           bombs.repeat(unit, size))])
    if kind == "many":  # at most 80 MB in all: the test's own deflating stays short
        each = draw(st.sampled_from([0, 100, 50_000, MB // 2]))
        count = draw(st.integers(1, min(3000, 80 * MB // (each + 1))))
        return bombs.rebuild(data, extra=((f"p/{i}.xml", bombs.repeat(b"<a/>", each))
                                          for i in range(count)))
    if kind == "name":
        return _with_raw_name(data, draw(st.sampled_from(NAMES)))
    if kind == "doctype":
        return _replace_text_part(data, draw(st.sampled_from(DOCTYPES)),
                                  draw(st.sampled_from([0, 300, 100_000])))
    if kind == "lie":
        return _claim(data, draw(st.sampled_from([0, 1, 1000, 2**32 - 1])))
    if kind == "method":
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
            for info in source.infolist():
                target.writestr(info.filename, source.read(info),
                                compress_type=draw(st.sampled_from(
                                    [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, zipfile.ZIP_DEFLATED])))
        return out.getvalue()
    if kind == "truncate":
        return data[:draw(st.integers(0, len(data)))]
    flipped = bytearray(data)
    for at in draw(st.lists(st.integers(0, len(data) - 1), min_size=1, max_size=20)):
        flipped[at] ^= draw(st.integers(1, 255))
    return bytes(flipped)


def _with_raw_name(data: bytes, name: str) -> bytes:
    out = io.BytesIO(data)
    with zipfile.ZipFile(out, "a") as package:
        info = zipfile.ZipInfo("placeholder")
        info.filename = name  # unnormalised, as a hostile tool writes it
        package.writestr(info, b"<a/>")
    return out.getvalue()


def _replace_text_part(data: bytes, doctype: bytes, depth: int) -> bytes:
    def hostile(original: bytes) -> Iterable[bytes]:
        body = original.split(b"?>", 1)[1] if original.startswith(b"<?xml") else original
        yield doctype + b"<a>" * depth + body + b"</a>" * depth

    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    part = next((bombs.TEXT_PART[e][0] for e in bombs.KINDS if bombs.TEXT_PART[e][0] in names),
                names[0])
    return bombs.rebuild(data, {part: hostile})


def _claim(data: bytes, claimed: int) -> bytes:
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    if at >= 0:
        struct.pack_into("<I", out, at + 24, claimed)
    return bytes(out)


@st.composite
def hostile_packages(draw) -> tuple[str, bytes]:
    """A real package, rebuilt with up to two changes, then perhaps broken once (a lie, a cut,
    flipped bytes: nothing can be rebuilt after one of those)."""
    ext = draw(st.sampled_from(bombs.KINDS))
    data = bombs.base(ext)
    changes = draw(st.lists(st.sampled_from(["inflate", "many", "name", "doctype", "method"]),
                            max_size=2))
    breaks = draw(st.lists(st.sampled_from(["lie", "truncate", "flip"]),
                           min_size=0 if changes else 1, max_size=1))
    for kind in changes + breaks:
        data = _mutate(data, kind, draw)
    return "lesson" + draw(st.sampled_from([ext, *bombs.KINDS])), data


def test_packages_hypothesis_makes_while_others_translate(app):
    seen: list[int] = []
    with Translating(app.url) as translating, \
            httpx.Client(base_url=app.url, trust_env=False, timeout=60) as c:

        @given(package=hostile_packages(), route=st.sampled_from(["/v1/documents",
                                                                  "/v2/document"]))
        @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def fuzz(package, route):
            name, data = package
            if len(data) > app.settings.max_file_bytes:
                return  # refused as it arrives (tests/test_upload_limits.py)
            answer = send(c, route, name, data)
            seen.append(answer.status_code)
            settle(c, route, answer)

        fuzz()
    translating.check()
    assert len(seen) >= MAX_EXAMPLES // 2 and any(code >= 400 for code in seen), seen
