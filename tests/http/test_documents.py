"""Long documents and the phrase cache through the service, on the demo model.

A document of many paragraphs with repeated sentences keeps its layout byte for byte, and each
distinct sentence reaches the model once; identical requests arriving together share one
sequence; the persistent cache survives a restart and Redis shares results between processes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from redis_server import redis_server, requires_redis_server

from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.engine import GREEDY, DecodingOptions
from hunyuan_webui.service import TranslationRequest

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

REPO = Path(__file__).resolve().parents[2]

DOCUMENT_ZH = (
    "  你好\n"
    "\n"
    "谢谢你的帮助。今天天气很好。 谢谢。\n"
    "- 早上好。\n"
    "- 谢谢。\n"
    "\n\n"
    "    欢迎来到北京。谢谢你的帮助。  \n"
    "1. 我们明天见。\n"
    "谢谢。"
)
EXPECTED_EN = (
    "  Hello\n"
    "\n"
    "Thank you for your help. The weather is nice today. Thank you.\n"
    "- Good morning.\n"
    "- Thank you.\n"
    "\n\n"
    "    Welcome to Beijing. Thank you for your help.  \n"
    "1. See you tomorrow.\n"
    "Thank you."
)


def greedy(text, src="zh", tgt="en"):
    return TranslationRequest(text=text, source_lang=src, target_lang=tgt, options=GREEDY)


def test_document_layout_is_kept_and_each_distinct_sentence_translated_once(make_translator):
    translator = make_translator(cache=PhraseCache(size=100))
    updates = list(translator.start(greedy(DOCUMENT_ZH)))
    assert updates[-1].result.text == EXPECTED_EN
    assert "".join(u.delta for u in updates) == EXPECTED_EN
    assert updates[-1].result.segments == 10
    assert translator.model_calls == 7  # 7 distinct sentences among 10
    again = translator.translate(greedy(DOCUMENT_ZH))
    assert again.text == EXPECTED_EN and again.cached
    assert translator.model_calls == 7


def test_second_identical_request_comes_from_the_cache(make_translator):
    translator = make_translator(cache=PhraseCache(size=100))
    first = translator.translate(greedy("这本书很有意思。"))
    second = translator.translate(greedy("这本书很有意思。"))
    assert first.text == second.text == "This book is very interesting."
    assert not first.cached and second.cached
    assert translator.model_calls == 1
    assert translator.cache.stats().hits == 1


def test_sampled_results_are_cached_and_a_fresh_answer_is_asked_for(make_translator):
    """With the page's default settings (the model card's sampling) the cache used to be skipped:
    30 students got 30 model runs and 30 different answers. The first answer is kept now; a
    fresh one is asked for with ``cache=False`` (Retranslate), and replaces it."""
    translator = make_translator(cache=PhraseCache(size=100))
    sampled = TranslationRequest("这本书很有意思。", "en", "zh")
    first = translator.translate(sampled)
    second = translator.translate(sampled)
    assert not first.cached and second.cached and second.text == first.text
    assert translator.model_calls == 1
    fresh = translator.translate(replace(sampled, cache=False))
    assert not fresh.cached and fresh.text == "This book is very interesting."
    assert translator.model_calls == 2
    assert translator.cache.stats().hits == 1
    other = translator.translate(replace(sampled, options=DecodingOptions(temperature=0.9)))
    assert not other.cached  # other decoding settings are another entry


def test_identical_requests_arriving_together_run_the_model_once(make_translator):
    translator = make_translator(cache=PhraseCache(size=100))
    results: list[str] = []
    barrier = threading.Barrier(6)

    def ask():
        barrier.wait()
        results.append(translator.translate(greedy("我们明天见。")).text)

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == ["See you tomorrow."] * 6
    assert translator.model_calls == 1


def test_persistent_cache_survives_a_restart(make_translator, tmp_path):
    first = make_translator(cache=PhraseCache(size=10, directory=str(tmp_path)))
    assert first.translate(greedy("欢迎来到北京。")).text == "Welcome to Beijing."
    first.cache.close()
    restarted = make_translator(cache=PhraseCache(size=10, directory=str(tmp_path)))
    result = restarted.translate(greedy("欢迎来到北京。"))
    assert result.text == "Welcome to Beijing." and result.cached
    assert restarted.model_calls == 0


SCRIPT = textwrap.dedent("""
    import sys
    from hunyuan_webui.engine import GREEDY
    from hunyuan_webui.service import TranslationRequest, Translator
    from hunyuan_webui.settings import Settings
    from hunyuan_webui.choice import with_demo
    settings = with_demo(Settings(demo=True, redis_url=sys.argv[1], cache_size=0))
    translator = Translator.from_settings(settings)
    assert translator.engine.wait_ready(120).state == "ready"
    result = translator.translate(TranslationRequest("你叫什么名字？", "en", "zh", GREEDY))
    print(result.text, translator.model_calls, result.cached, sep="|")
""")


@requires_redis_server
def test_two_processes_share_results_through_redis():
    with redis_server() as url:
        outputs = [subprocess.run([sys.executable, "-c", SCRIPT, url], cwd=REPO, text=True,
                                  capture_output=True, timeout=300) for _ in range(2)]
    assert [o.returncode for o in outputs] == [0, 0], outputs[0].stderr[-2000:]
    first, second = (o.stdout.strip().splitlines()[-1] for o in outputs)
    assert first == "What is your name?|1|False"
    assert second == "What is your name?|0|True"
