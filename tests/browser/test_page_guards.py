"""The answer checks on the page and on a student's phone, in Chromium: an answer streamed as it
came is replaced once it is judged whole, and one that stays bad is marked beside the output; a
class's student page applies the room's correction. The app is ``python app.py --engine openai``
on a scripted server (tests/scripted_openai.py) that types each answer slowly, so the bad one
shows before it is judged."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from apphelpers import app_process
from browserhelpers import OUTPUT, open_page, pick
from scripted_openai import ScriptedServer

from benchmarks.guard_corpus import MODEL, Case

pytestmark = pytest.mark.slow
FIXED = Case("language", "zh", "fr", "我们下午去博物馆参观古代艺术展览。",
             "We are going to the museum this afternoon to see the ancient art exhibition.",
             retry="Cet après-midi, nous allons au musée voir l'exposition d'art ancien.")
MARKED = Case("number", "en", "de", "Please open your books at page 84.",
              "Bitte öffnet eure Bücher auf Seite 48.")
IN_CLASS = Case("language", "zh", "fr", "同学们，请把课本翻到第一页。",
                "Students, please turn your textbooks to the first page.",
                retry="Chers élèves, ouvrez vos manuels à la première page, s'il vous plaît.")
# Every value the output box takes, as the page shows it.
RECORD = """
window.__shown = [];
setInterval(() => {
  const box = document.querySelector('#output-box textarea');
  const value = box ? (box.value ?? box.textContent) : '';
  if (value && window.__shown[window.__shown.length - 1] !== value) window.__shown.push(value);
}, 15);
"""
# Every state of a phone's translation (its text and whether it is still a draft), as the DOM
# changes: a correction (a draft's text replaced) is seen before the final translation lands.
ON_PHONE = """
window.__shown = [];
new MutationObserver(() => {
  const tr = document.querySelector('#lesson .tr');
  const value = tr ? `${tr.className}|${tr.textContent}` : '';
  if (value && window.__shown[window.__shown.length - 1] !== value) window.__shown.push(value);
}).observe(document.querySelector('#lesson'), {subtree: true, childList: true,
                                                characterData: true, attributes: true});
"""


@pytest.fixture(scope="module")
def remote_url() -> Iterator[str]:
    with ScriptedServer([], delay=0.08, slow=[FIXED, MARKED, IN_CLASS]) as server, app_process(
            "--model", MODEL, "--engine", "openai", "--endpoint", server.url, demo=False,
            timeout=180) as app:
        yield app.url


def _translate(browser, url: str, case: Case, source: str, target: str):
    page = open_page(browser, url)
    page.evaluate(RECORD)
    pick(page, "source-lang", source)
    pick(page, "target-lang", target)
    page.locator("#input-box textarea").fill(case.source)
    page.locator("#translate-btn").click()
    return page


def test_an_answer_shown_as_it_came_is_replaced_by_the_retry(browser, remote_url):
    page = _translate(browser, remote_url, FIXED, "简体中文 · Chinese", "Français · French")
    page.wait_for_function(f"{OUTPUT} === {FIXED.retry!r}", timeout=60_000)
    shown = page.evaluate("window.__shown")
    early = [v for v in shown if FIXED.answer.startswith(v)]
    assert early and len(early[0]) < len(FIXED.answer), shown  # words at once, as they came
    assert shown[-1] == FIXED.retry
    page.wait_for_selector("#translate-btn:not([disabled])", timeout=60_000)
    assert "⚠️" not in page.locator("#progress").inner_text()
    page.context.close()


def test_an_answer_that_stays_bad_is_marked(browser, remote_url):
    page = _translate(browser, remote_url, MARKED, "English", "Deutsch · German")
    page.wait_for_function("document.querySelector('#progress').innerText.includes('⚠️')",
                           timeout=60_000)
    assert page.evaluate(OUTPUT) == MARKED.answer
    assert "a number of the source (84) is not in it" in page.locator("#progress").inner_text()
    page.context.close()


def test_a_students_phone_shows_the_rooms_correction(browser, remote_url):
    with httpx.Client(base_url=remote_url, timeout=60, trust_env=False) as client:
        room = client.post("/class/api/rooms", json={"lang": "zh", "title": "Guards"}).json()
        context = browser.new_context(locale="fr-FR", viewport={"width": 390, "height": 800})
        phone = context.new_page()
        phone.goto(f"{remote_url}/class/{room['code']}")
        phone.wait_for_selector("#enter")
        phone.locator("#enter").click()
        phone.wait_for_function("() => { const s = document.querySelector('#status');"
                                " return s && s.textContent !== '' && !s.classList.contains('bad');"
                                " }", timeout=60_000)
        phone.evaluate(ON_PHONE)
        client.post(f"/class/api/rooms/{room['code']}/sentences", json={"text": IN_CLASS.source},
                    headers={"X-Class-Key": room["key"]})
        phone.wait_for_function("t => [...document.querySelectorAll('#lesson .tr')]"
                                ".some(e => e.textContent === t)", arg=IN_CLASS.retry,
                                timeout=60_000)
    shown = [tuple(v.split("|", 1)) for v in phone.evaluate("window.__shown")]
    drafts = [text for kind, text in shown if kind == "tr draft" and text != "…"]
    assert drafts and IN_CLASS.answer.startswith(drafts[0]), shown  # the draft as it came
    assert ("tr draft", IN_CLASS.retry) in shown, shown  # the correction, before the end
    assert shown[-1] == ("tr", IN_CLASS.retry)
    context.close()
