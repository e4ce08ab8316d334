"""The answer guards (service.checks.answers, service.checks.watch) on answers we control: pure checks, and
the translator over a scripted fake engine (no model loaded)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from apphelpers import wait_until
from fakes import ScriptedEngine

from hunyuan_webui import models, prompts
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.demo.misbehaving import MISBEHAVIOURS
from hunyuan_webui.demo.phrases import load_phrases
from hunyuan_webui.detect import LanguageDetector
from hunyuan_webui.prompts import alternative_prompt
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.service.checks.answers import Guards, find_loop
from hunyuan_webui.service.checks.budget import answer_budget
from hunyuan_webui.service.checks.watch import Watch
from hunyuan_webui.settings import Settings, from_sources
from hunyuan_webui.web.page.report import last_run_markdown

DETECTOR = LanguageDetector()
GUARDS = Guards(family="hunyuan-mt", detector=DETECTOR)
SPEC = models.resolve("tencent/Hunyuan-MT-7B")


def watch(source_text: str, source: str, target: str, answer: str) -> Watch:
    """An answer fed to a watch a character at a time, as a stream delivers it."""
    w = Watch(GUARDS, source_text, source, target)
    for char in answer:
        w.feed(char)
        if w.finding is not None:
            return w
    w.finish()
    return w




def test_no_false_alarm_on_any_demo_phrase():
    phrases = load_phrases()
    assert len({p.target_lang for p in phrases}) >= 15
    alarms = {p.source for p in phrases
              if watch(p.source, p.source_lang, p.target_lang, p.target).finding is not None}
    assert not alarms, alarms


@pytest.mark.parametrize("source, src, tgt, answer", [
    ("iPhone", "en", "ja", "iPhone"),  # a name
    ("12345", "zh", "en", "12345"),  # a number
    ("print('hello world')", "en", "zh", "print('hello world')"),  # code
    ("GitHub Actions", "en", "zh", "GitHub Actions"),  # a proper name
    ("Restaurant", "en", "fr", "Restaurant"),  # one word, the same in both
    ("OK", "en", "zh", "OK"),  # too short to judge
    ("我用iPhone拍照。", "zh", "en", "I took the photo with my iPhone."),
    ("I use WeChat every day.", "en", "zh", "我每天用 WeChat。"),  # mixed, mostly the target
    ("哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈", "zh", "en", "ha" * 18),  # the source repeats itself
])
def test_names_numbers_code_and_mixed_answers_pass(source, src, tgt, answer):
    assert watch(source, src, tgt, answer).finding is None


@pytest.mark.parametrize("m", MISBEHAVIOURS, ids=lambda m: f"{m.guard}-{m.source_lang}-"
                                                        f"{m.target_lang}-{m.source}")
def test_every_misbehaving_answer_is_caught_and_every_right_retry_passes(m):
    w = watch(m.source, m.source_lang, m.target_lang, m.answer)
    assert w.finding is not None and w.finding.kind == m.guard
    if m.retry:
        retried = watch(m.source, m.source_lang, m.target_lang, m.retry)
        assert (retried.finding is None) == m.served


def test_a_loop_is_cut_after_its_first_copy():
    assert find_loop("Bonne nuit" + "!" * 40) == len("Bonne nuit!")
    assert find_loop("Good night! " * 4) == len("Good night!")
    assert find_loop("哈" * 40) == 1
    assert find_loop("The weather is nice today, very nice.") is None
    assert find_loop("!!!") is None


def test_the_answer_budget_follows_the_pair():
    assert answer_budget("你好世界", "zh", "en") > answer_budget("Hello world", "en", "zh")
    assert answer_budget("x" * 100, "en", "fr") == 100 * 2.5 + 40


def test_the_retry_wording_is_the_other_template():
    assert alternative_prompt("hunyuan-mt", "translate", "Good night.", "en", "ja") == (
        "把下面的文本翻译成日语，不要额外解释。\n\nGood night.")
    assert alternative_prompt("hunyuan-mt", "translate", "晚安。", "zh", "en") == (
        prompts.render("hunyuan-mt", "translate", "晚安。", "en", "fr").replace(
            "French", "English"))
    assert alternative_prompt("hunyuan-mt", "chimera", "x", "en", "fr") is None


# -- through the translator ------------------------------------------------------------------------

def usual(text: str, source: str, target: str) -> str:
    return prompts.translation_prompt(text, source, target, "hunyuan-mt")


def translator_for(engine: ScriptedEngine, **overrides) -> Translator:
    settings = Settings(model=SPEC.id, cache_size=64, **overrides)
    return Translator(engine, SPEC, settings, cache=PhraseCache(size=64), detector=DETECTOR)


def hindi_then_japanese(prompt: str, options) -> str:
    return "おやすみなさい。" if prompt.startswith("把") else "शुभ रात्रि।"


def test_a_retry_in_the_target_language_is_served_and_cached():
    engine = ScriptedEngine(hindi_then_japanese)
    translator = translator_for(engine)
    request = TranslationRequest("Good night.", "ja", "en")
    result = translator.translate(request)
    assert result.text == "おやすみなさい。" and result.warnings == ()
    [(_, first), (alt, retry)] = engine.calls
    assert alt == alternative_prompt("hunyuan-mt", "translate", "Good night.", "en", "ja")
    assert retry.deterministic and not first.deterministic
    assert translator.guards.counts.items() == [(("language", "retry_served", "en-ja"), 1)]
    again = translator.translate(request)
    assert again.cached and again.text == "おやすみなさい。" and len(engine.calls) == 2


def test_a_marked_answer_says_so_and_is_never_cached():
    engine = ScriptedEngine(lambda prompt, options: "शुभ रात्रि।")
    translator = translator_for(engine)
    request = TranslationRequest("Good night.", "ja", "en")
    result = translator.translate(request)
    assert result.text == "शुभ रात्रि।"
    assert result.to_dict()["warnings"] == [{"segment": 0, "code": "wrong_language",
                                             "guard": "language", "detected": "hi",
                                             "retried": True}]
    assert translator.guards.counts.items() == [(("language", "marked", "en-ja"), 1)]
    assert not translator.translate(request).cached and len(engine.calls) == 4
    assert "⚠️ Check this translation: it seems to be in Hindi" in last_run_markdown(result)
    assert "似乎是印地语" in last_run_markdown(result, "zh")


def test_a_loop_is_stopped_at_once_and_retried_with_a_stronger_penalty():
    def script(prompt: str, options) -> str:
        return "Bonne nuit." if options.repetition_penalty >= 1.2 else "!" * 2000

    engine = ScriptedEngine(script, delay=0.001)
    result = translator_for(engine).translate(TranslationRequest("Good night.", "fr", "en"))
    assert result.text == "Bonne nuit." and result.warnings == ()
    [(first_prompt, first), (second_prompt, retry)] = engine.calls
    assert first_prompt == second_prompt == usual("Good night.", "en", "fr")
    assert retry.deterministic and retry.repetition_penalty >= 1.2
    assert wait_until(lambda: len(engine.cancelled) == 1)  # stopped, not run to the cap
    assert result.usage["completion_tokens"] < 100


def test_a_loop_that_comes_back_is_cut_and_marked():
    engine = ScriptedEngine(lambda prompt, options: "Good night! " * 200)
    translator = translator_for(engine)
    result = translator.translate(TranslationRequest("晚安。", "en", "zh"))
    assert result.text.strip() == "Good night!"
    assert [w["code"] for w in result.warnings] == ["repetition_loop"]
    assert not translator.translate(TranslationRequest("晚安。", "en", "zh")).cached


def test_an_answer_longer_than_its_pair_allows_is_cut_at_its_budget():
    words = " ".join(f"mot{i}" for i in range(400))  # never repeats, never ends
    engine = ScriptedEngine(lambda prompt, options: words, delay=0.001)
    result = translator_for(engine).translate(TranslationRequest("Hello there.", "fr", "en"))
    assert len(result.text) <= answer_budget("Hello there.", "en", "fr")
    assert [w["guard"] for w in result.warnings] == ["length"]
    assert wait_until(lambda: engine.cancelled)


def test_a_copied_source_is_retried_in_the_other_wording():
    def script(prompt: str, options) -> str:
        return "I like cats." if prompt.startswith("Translate") else "我喜欢猫。"

    engine = ScriptedEngine(script)
    result = translator_for(engine).translate(TranslationRequest("我喜欢猫。", "en", "zh"))
    assert result.text == "I like cats." and result.warnings == ()
    assert engine.calls[1][0].startswith("Translate the following segment into English")


def test_an_answer_in_another_script_still_streams():
    """zh->en: once its first letters are Latin the answer is shown as it comes, a few words
    behind the engine, not held to its end."""
    answer = "The weather is nice today, and we are going to the park after lunch."
    engine = ScriptedEngine(lambda prompt, options: answer, delay=0.01)
    job = translator_for(engine).start(TranslationRequest("今天天气很好，我们午饭后去公园。",
                                                          "en", "zh"))
    texts = [u.text for u in job if u.result is None]
    assert len(texts) > 5 and texts[0] and len(texts[0]) < len(answer) // 2
    assert job.result().text == answer


def test_guards_can_be_turned_off_one_by_one_or_all():
    assert Translator(ScriptedEngine(str), SPEC, Settings(guards=False)).guards is None
    settings, _ = from_sources(["--no-language-guard"], env={})
    guards = Translator(ScriptedEngine(str), SPEC, settings).guards
    assert not guards.language and guards.loop and guards.copy
    settings, _ = from_sources([], env={"HYMT_LOOP_GUARD": "0"})
    assert not Translator(ScriptedEngine(str), SPEC, settings).guards.loop
    engine = ScriptedEngine(lambda prompt, options: "शुभ रात्रि, कल सुबह मिलते हैं।")
    no_language = translator_for(engine, language_guard=False)
    assert no_language.translate(TranslationRequest("Good night.", "ja", "en")).warnings == ()
    engine = ScriptedEngine(lambda prompt, options: "शुभ रात्रि।")
    off = translator_for(engine, guards=False)
    assert off.translate(TranslationRequest("Good night.", "ja", "en")).warnings == ()
    assert off.translate(TranslationRequest("Good night.", "ja", "en")).cached


def test_modes_other_than_plain_translation_retry_with_their_own_prompt():
    engine = ScriptedEngine(lambda prompt, options: "शुभ रात्रि।")
    translator = translator_for(engine)
    request = replace(TranslationRequest("Good night.", "ja", "en"), mode="context",
                      context="A hotel.")
    result = translator.translate(request)
    assert result.warnings and engine.calls[0][0] == engine.calls[1][0]


@pytest.mark.parametrize("args", [["--quantization", "experts_int8"],
                                  ["--max-num-seqs", "8", "--quantization=experts_int8"],
                                  ["-q", "moe_wna16"]])
def test_managed_servers_never_pass_a_moe_quantization_to_a_dense_model(args):
    from hunyuan_webui.engine.servers import check_quantization
    from hunyuan_webui.errors import InputError

    with pytest.raises(InputError, match="dense, and its answers would come out as '!!!!'"):
        check_quantization(SPEC, args)
    check_quantization(models.resolve("tencent/Hy-MT2-30B-A3B"), args)  # a MoE: its business
    check_quantization(SPEC, ["--quantization", "fp8"])


def test_a_marked_answer_shared_in_flight_is_cached_by_no_one():
    """Two requests read one sequence (the in-flight table); its answer is bad for both: both
    are marked after their own retries, and the cache has nothing for a third."""
    engine = ScriptedEngine(lambda prompt, options: "再见，明天见。", delay=0.005)
    translator = translator_for(engine)
    request = TranslationRequest("Goodbye, see you tomorrow.", "ko", "en")
    jobs = [translator.start(request).prime() for _ in range(2)]
    results = [job.result() for job in jobs]
    assert [[w["code"] for w in r.warnings] for r in results] == [["wrong_language"]] * 2
    assert len(engine.calls) == 3  # one shared answer, one retry each
    third = translator.translate(request)
    assert not third.cached and third.warnings


def test_an_answer_shown_early_and_judged_bad_at_its_end_is_replaced():
    """zh->fr answered in English: shown as it comes (Latin letters), judged whole at its end,
    retried in the other wording; the job's update is replaced with the French."""
    english = "We are going to the museum this afternoon to see the ancient art exhibition."
    french = "Cet après-midi, nous allons au musée voir l'exposition d'art ancien."
    engine = ScriptedEngine(lambda prompt, options: french if prompt.startswith("Translate")
                            else english, delay=0.002)
    translator = translator_for(engine)
    request = TranslationRequest("我们下午去博物馆参观古代艺术展览。", "fr", "zh")
    updates = list(translator.start(request))
    shown = [u.text for u in updates if not u.replaced and u.result is None and u.text]
    assert shown and english.startswith(shown[0]) and len(shown[0]) < len(english)
    [replaced] = [u for u in updates if u.replaced]
    assert (replaced.text, replaced.delta, replaced.warnings) == (french, "", ())
    assert updates[-1].result.text == french and updates[-1].result.warnings == ()
    assert translator.translate(request).cached  # the retry's answer, served and cached
