"""A class in headless Chromium (Debian's): a teacher's tab and three students' phones.

The teacher (an English browser) starts a class from /class; a Chinese phone opens the join URL
(what the QR code holds), a French phone types the code, a Japanese phone opens the URL too.
Each sees the teacher's sentence in its own language; a Chinese question reaches the teacher in
English; a phone that goes offline misses a sentence and shows it once it is back. All of it
under the page's Content-Security-Policy. The French phone is the README's picture
(the teacher's is test_class_pages.py's projector).
"""

from __future__ import annotations

import pytest
from browserhelpers import CHROMIUM, CSP_VIOLATIONS, readme_picture

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


def tab(browser, locale: str, **options):
    context = browser.new_context(locale=locale, **options)
    context.add_init_script(CSP_VIOLATIONS)
    return context, context.new_page()


def shows(page, text: str, timeout: float = 60_000) -> None:
    """A finished sentence on the page reads ``text``."""
    page.wait_for_function(
        "t => [...document.querySelectorAll('#lesson .tr:not(.draft)')]"
        ".some(e => e.textContent === t)", arg=text, timeout=timeout)


def test_a_class_teacher_writes_once_and_each_phone_reads_its_language(browser, url):
    _, teacher = tab(browser, "en-US", viewport={"width": 1280, "height": 900})
    teacher.goto(f"{url}/class")
    assert teacher.locator("#teach-lang").input_value() == "en"  # the browser's language
    teacher.locator("#title").fill("Lesson 1")
    teacher.locator("#start").click()
    teacher.wait_for_selector("#join-code")
    code = teacher.locator("#join-code").inner_text().replace(" ", "")
    join_url = teacher.locator("#join-url").inner_text()
    assert join_url.endswith(f"/class/{code}") and len(code) == 6
    # The QR code is an image the browser fetches after the page: wait for it (deadline 15 s).
    teacher.wait_for_function("() => { const img = document.querySelector('#qr');"
                              " return img && img.complete && img.naturalWidth > 0; }",
                              timeout=60_000)

    phones = {}
    for locale, lang, by_code in (("zh-CN", "zh", False), ("fr-FR", "fr", True),
                                  ("ja-JP", "ja", False)):
        context, page = tab(browser, locale, **PHONE)
        if by_code:  # typed the code read aloud
            page.goto(f"{url}/class")
            page.locator("#code").fill(f"{code[:3]} {code[3:]}")
            page.locator("#go").click()
        else:  # scanned the QR code
            page.goto(join_url)
        page.wait_for_selector("#enter")
        assert page.locator("#lang").input_value() == lang  # the browser's language
        page.locator("#name").fill(f"student-{lang}")
        page.locator("#enter").click()
        page.wait_for_selector("#status")
        page.wait_for_function("() => document.querySelector('#status').textContent !== ''"
                               " && !document.querySelector('#status').classList.contains('bad')")
        phones[lang] = (context, page)
    teacher.wait_for_function("() => /3/.test(document.querySelector('#counts').textContent)")

    teacher.locator("#text").fill("Good morning.")
    teacher.locator("#text").press("Enter")
    for lang, expected in (("zh", "早上好。"), ("fr", "Bonjour."),
                           ("ja", "おはようございます。")):
        shows(phones[lang][1], expected)
    readme_picture(phones["fr"][1], "class-student.png")
    # The original is a tap away.
    zh = phones["zh"][1]
    zh.locator("#lesson .s").first.click()
    assert zh.locator("#lesson .s .orig").first.inner_text() == "Good morning."

    # A question, in Chinese, reaches the teacher in English.
    zh.locator("#question").fill("谢谢你的帮助。")
    zh.locator("#ask").click()
    teacher.wait_for_function("() => document.querySelector('#questions .tr')?.textContent"
                              " === 'Thank you for your help.'", timeout=60_000)

    # The Japanese phone goes offline; the teacher goes on; it comes back and catches up.
    ja_context, ja = phones["ja"]
    ja_context.set_offline(True)
    ja.evaluate("() => window.dispatchEvent(new Event('offline'))")
    teacher.locator("#text").fill("Thank you.")
    teacher.locator("#text").press("Enter")
    shows(zh, "谢谢。")
    ja.wait_for_timeout(500)
    assert ja.locator("#lesson .s").count() == 1  # it missed this one
    assert "bad" in ja.locator("#status").get_attribute("class")
    ja_context.set_offline(False)
    ja.evaluate("() => window.dispatchEvent(new Event('online'))")
    shows(ja, "ありがとうございます。")
    assert ja.locator("#lesson .s").count() == 2  # in order, once each
    assert ja.locator("#lesson .tr").all_inner_texts() == ["おはようございます。",
                                                          "ありがとうございます。"]

    for page in [teacher] + [p for _, p in phones.values()]:
        assert page.evaluate("window.__csp") == []


def test_a_student_who_reloads_is_back_in_the_same_place(browser, url):
    _, teacher = tab(browser, "en-US", viewport={"width": 1280, "height": 900})
    teacher.goto(f"{url}/class")
    teacher.locator("#start").click()
    teacher.wait_for_selector("#join-code")
    join_url = teacher.locator("#join-url").inner_text()
    _, phone = tab(browser, "zh-CN", **PHONE)
    phone.goto(join_url)
    phone.locator("#enter").click()
    teacher.wait_for_function("() => /1/.test(document.querySelector('#counts').textContent)")
    teacher.locator("#text").fill("Please sit down.")
    teacher.locator("#text").press("Enter")
    shows(phone, "请坐。")
    phone.reload()
    shows(phone, "请坐。")  # no language to pick again: the same student, the same lesson
    assert phone.locator("#lesson .s").count() == 1
