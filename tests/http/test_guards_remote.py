"""The answer checks where a user meets them: ``python app.py --engine openai`` pointed at a
scripted OpenAI-compatible server (tests/scripted_openai.py) whose answers are the corpora's
(tests/data/guards/), none of them the demo model's.

Every bad answer of the misbehaving set comes back from ``/v1/translate`` with its warning, or
as the retried good answer, and a second request is never the bad answer from the cache; an
answer streamed as it came is taken back (a ``replace`` event) once it is judged whole; a room's
students get a ``correction`` event; the legitimate set comes back unmarked and unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

import httpx
import pytest
from apphelpers import app_process, sse_events
from roomhelpers import Reader, close_all
from scripted_openai import ScriptedServer

from benchmarks.guard_corpus import MODEL, Case, load_legit, load_misbehaving
from hunyuan_webui.service.checks.answers import WARNING_CODES

pytestmark = pytest.mark.slow
LEGIT, BAD = load_legit(), load_misbehaving()
# Answers streamed slowly (a chunk every 60 ms), so that a reader sees them grow.
STREAMED_FIXED = Case("language", "zh", "fr", "我们下午去博物馆参观古代艺术展览。",
                      "We are going to the museum this afternoon to see the ancient art "
                      "exhibition.", retry="Cet après-midi, nous allons au musée voir "
                                           "l'exposition d'art ancien.")
STREAMED_MARKED = Case("number", "en", "de", "Please open your books at page 84.",
                       "Bitte öffnet eure Bücher auf Seite 48.")
ROOM_FIXED = Case("language", "zh", "fr", "同学们，请把课本翻到第一页。",
                  "Students, please turn your textbooks to the first page.",
                  retry="Chers élèves, ouvrez vos manuels à la première page, s'il vous plaît.")
SLOW = (STREAMED_FIXED, STREAMED_MARKED, ROOM_FIXED)
# What the issue names, each by a case of the set: a third language in a shared script, Chinese
# for Japanese, half a translation, an empty answer, a changed number.
MUST_SHOW = {
    "English for French": ("wrong_language", "ja", "fr", "私は毎朝六時に起きて、犬と散歩します。"),
    "French for German": ("wrong_language", "en", "de", "My grandmother makes the best apple "
                                                      "cake in the whole village."),
    "Spanish for Portuguese": ("wrong_language", "zh", "pt", "我妹妹每天晚上都读一本新书。"),
    "Chinese for Japanese": ("wrong_language", "en", "ja", "My father is a doctor."),
    "half a translation": ("half_translated", "zh", "en", "老师说明天的考试很重要，大家要认真复习。"),
    "empty": ("empty_answer", "en", "de", "Where are you from?"),
    "a changed number": ("number_changed", "en", "es", "The tickets cost 15 euros each."),
}


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer([*LEGIT, *BAD], delay=0.06, slow=SLOW) as server:
        yield server


@pytest.fixture(scope="module")
def remote(scripted: ScriptedServer) -> Iterator[str]:
    with app_process("--model", MODEL, "--engine", "openai", "--endpoint", scripted.url,
                     "--cache-size", "4096", demo=False, timeout=180) as app:
        yield app.url
    close_all()


def _translate(client: httpx.Client, case: Case, **extra: object) -> dict:
    r = client.post("/v1/translate", json={"text": case.source, "source_lang": case.source_lang,
                                           "target_lang": case.target_lang, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def test_every_bad_answer_is_marked_or_retried_and_never_served_bad_from_the_cache(remote):
    with httpx.Client(base_url=remote, timeout=60, trust_env=False) as client:
        for case in BAD:
            first, again = _translate(client, case), _translate(client, case)
            if case.retry:  # the retry's good answer, served, cached, and nothing to warn of
                assert (first["translation"], first.get("warnings")) == (case.retry, None), case
                assert again["cached"] and again["translation"] == case.retry, case
            else:  # marked, and never cached: the second request is judged afresh
                assert first["warnings"], (case, first)
                assert all(w["code"] in WARNING_CODES.values() for w in first["warnings"])
                assert not again["cached"] and again["warnings"], (case, again)


def test_each_kind_the_issue_names_comes_back_with_its_warning(remote):
    by_key = {(c.source_lang, c.target_lang, c.source): c for c in BAD}
    with httpx.Client(base_url=remote, timeout=60, trust_env=False) as client:
        for what, (code, source, target, text) in MUST_SHOW.items():
            case = by_key[(source, target, text)]
            assert not case.retry, what  # the retry is bad again: it must be marked
            answer = _translate(client, case)
            assert [w["code"] for w in answer["warnings"]] == [code], (what, answer)
            assert not _translate(client, case)["cached"], what


def test_an_answer_streamed_as_it_came_is_replaced_once_it_is_judged_whole(remote):
    with httpx.Client(base_url=remote, timeout=60, trust_env=False) as client:
        raw = client.post("/v1/translate", json={
            "text": STREAMED_FIXED.source, "source_lang": "zh", "target_lang": "fr",
            "stream": True}).text
    events = [data for _, data in sse_events(raw)]
    deltas = "".join(e.get("delta", "") for e in events[:[("replace" in e) for e in events]
                                                         .index(True)])
    assert len(deltas) > 20 and STREAMED_FIXED.answer.startswith(deltas)  # shown at once
    [replace] = [e for e in events if "replace" in e]
    assert replace == {"replace": STREAMED_FIXED.retry, "warnings": []}
    [done] = [e for e in events if e.get("done")]
    assert done["translation"] == STREAMED_FIXED.retry and "warnings" not in done


def test_a_streamed_answer_that_stays_bad_is_marked_in_the_done_event(remote):
    with httpx.Client(base_url=remote, timeout=60, trust_env=False) as client:
        raw = client.post("/v1/translate", json={
            "text": STREAMED_MARKED.source, "source_lang": "en", "target_lang": "de",
            "stream": True}).text
    events = [data for _, data in sse_events(raw)]
    assert "".join(e.get("delta", "") for e in events) == STREAMED_MARKED.answer
    [done] = [e for e in events if e.get("done")]
    assert [(w["code"], w["missing"]) for w in done["warnings"]] == [("number_changed", "84")]


def test_a_rooms_students_get_a_correction_that_replaces_the_translation(remote):
    with httpx.Client(base_url=remote, timeout=60, trust_env=False) as client:
        room = client.post("/class/api/rooms", json={"lang": "zh", "title": "Guards"}).json()
        code, key = room["code"], room["key"]
        student = client.post(f"/class/api/rooms/{code}/join", json={"lang": "fr"}).json()
        reader = Reader(remote, code, student=student["student"], lang="fr")
        [sid] = client.post(f"/class/api/rooms/{code}/sentences", json={
            "text": ROOM_FIXED.source}, headers={"X-Class-Key": key}).json()["sentences"]
        assert _wait(lambda: reader.translations("fr").get(sid))
        reader.close()
    mine = [e for e in reader.events if e.get("sid") == sid and e["type"] != "sentence"]
    kinds = [e["type"] for e in mine]
    drafts = [e["text"] for e in mine if e["type"] == "draft"]
    assert drafts and all(ROOM_FIXED.answer.startswith(d) for d in drafts)  # shown as it came
    [correction] = [e for e in mine if e["type"] == "correction"]
    assert correction["text"] == ROOM_FIXED.retry and correction["warnings"] == []
    assert kinds.index("correction") < kinds.index("translation")
    assert reader.translations("fr")[sid] == ROOM_FIXED.retry


def test_the_legitimate_corpus_comes_back_unmarked_and_unchanged(remote):
    pair = lambda c: (c.source_lang, c.target_lang)  # noqa: E731
    with httpx.Client(base_url=remote, timeout=120, trust_env=False) as client:
        for (source, target), group in groupby(sorted(LEGIT, key=pair), key=pair):
            cases = list(group)
            r = client.post("/v1/translate", json={"text": [c.source for c in cases],
                                                   "source_lang": source, "target_lang": target})
            assert r.status_code == 200, r.text
            for case, item in zip(cases, r.json()["items"], strict=True):
                assert (item["translation"], item.get("warnings")) == (case.answer, None), case


def _wait(predicate, timeout: float = 60.0) -> object:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return None
