"""The demo recogniser (assets/demo-asr) through the library, as a user runs it: a CTranslate2
Whisper loaded by faster-whisper, recognising espeak-ng's voice exactly and writing nothing for
silence or noise; the streaming API on it."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hunyuan_webui import Transcriber
from hunyuan_webui.demo import asr
from hunyuan_webui.demo.asr_data import spoken_phrases
from hunyuan_webui.demo.phrases import load_phrases
from hunyuan_webui.demo.voices import Voice, speak
from hunyuan_webui.speech import Draft, Final
from hunyuan_webui.speech.audio import RATE, decode, to_pcm16, wav_bytes

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
REQUIRED = [("zh", "早上好。"), ("zh", "请打开书。"), ("zh", "谢谢你的帮助。"), ("en", "Good morning.")]


@pytest.fixture(scope="module")
def ear() -> Transcriber:
    transcriber = Transcriber.load(demo=True)
    yield transcriber
    transcriber.close()


def test_demo_asr_command_prints_the_shipped_directory() -> None:
    done = subprocess.run([sys.executable, "-m", "hunyuan_webui", "demo-asr"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=True)
    directory = Path(done.stdout.strip())
    assert directory.is_dir() and asr.is_complete(directory)
    assert directory.resolve() == asr.DEMO_ASR_DIR.resolve()
    # The backend's own format, small: CTranslate2's model.bin in int8 and its vocabulary.
    config = json.loads((directory / "config.json").read_text())
    assert len(config["lang_ids"]) == 99
    assert json.loads((directory / "vocabulary.json").read_text()).__len__() == 51865
    size = sum(p.stat().st_size for p in directory.iterdir())
    assert size < 6_000_000, size


def test_it_is_loaded_as_a_real_model_is(ear: Transcriber) -> None:
    status = ear.status
    assert status.state == "ready"
    assert (status.backend, status.device, status.compute_type, status.demo) == \
        ("faster-whisper", "cpu", "int8", True)
    from faster_whisper import WhisperModel

    model = WhisperModel(str(asr.DEMO_ASR_DIR), device="cpu", compute_type="int8")
    assert model.model.is_multilingual and model.model.num_languages == 99


@pytest.mark.parametrize(("lang", "text"), REQUIRED)
def test_the_demo_phrases_are_recognised_exactly(ear: Transcriber, lang: str, text: str) -> None:
    assert ear.transcribe(speak(text, lang), language=lang).text == text


def test_every_phrase_in_the_default_voice(ear: Transcriber) -> None:
    wrong = []
    for lang, text in spoken_phrases(load_phrases()):
        got = ear.transcribe(speak(text, lang), language=lang).text
        if got != text:
            wrong.append((text, got))
    assert not wrong


def test_other_voices_speeds_and_rates(ear: Transcriber) -> None:
    """Voices it was trained on, and the same WAV at another rate and in stereo."""
    assert ear.transcribe(speak("请打开书。", "zh", Voice("f2")), language="zh").text == "请打开书。"
    assert ear.transcribe(speak("Good morning.", "en", Voice(speed=205)),
                          language="en").text == "Good morning."
    samples = decode(speak("谢谢你的帮助。", "zh"))
    t = np.arange(int(samples.size * 44100 / RATE))
    stereo = np.interp(t * RATE / 44100, np.arange(samples.size), samples)
    import io
    import wave

    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(44100)
        w.writeframes(np.repeat((stereo * 32767).astype("<i2")[:, None], 2, axis=1).tobytes())
    assert ear.transcribe(buffer.getvalue(), language="zh").text == "谢谢你的帮助。"


@pytest.mark.parametrize("kind", ["silence", "white noise"])
def test_sixty_seconds_without_speech_give_nothing(ear: Transcriber, kind: str) -> None:
    rng = np.random.default_rng(1)
    samples = np.zeros(60 * RATE, dtype=np.float32) if kind == "silence" else \
        rng.normal(0, 0.1, 60 * RATE).astype(np.float32)
    transcript = ear.transcribe(wav_bytes(samples), language="zh")
    assert transcript.text == "" and transcript.utterances == ()
    listener = ear.listen("zh", draft_every_s=0.5)
    events = []
    pcm = to_pcm16(samples)
    for at in range(0, len(pcm), 640):
        events += listener.feed(pcm[at:at + 640])
    events += listener.finish()
    assert [e for e in events if isinstance(e, Final) and e.text] == []


def test_streaming_two_phrases_with_a_pause(ear: Transcriber) -> None:
    audio = np.concatenate([np.zeros(RATE // 2, dtype=np.float32), decode(speak("谢谢你的帮助。", "zh")),
                            np.zeros(int(1.5 * RATE), dtype=np.float32),
                            decode(speak("请打开书。", "zh")), np.zeros(RATE, dtype=np.float32)])
    listener = ear.listen("zh", draft_every_s=0.4, min_draft_s=0.3)
    events = []
    pcm = to_pcm16(audio)
    for at in range(0, len(pcm), 640):  # 20 ms frames, as a microphone sends them
        events += listener.feed(pcm[at:at + 640])
    events += listener.finish()
    finals = [e for e in events if isinstance(e, Final)]
    assert [(f.utterance, f.text) for f in finals] == [(1, "谢谢你的帮助。"), (2, "请打开书。")]
    for final in finals:
        drafts = [e for e in events if isinstance(e, Draft) and e.utterance == final.utterance]
        assert drafts and events.index(drafts[-1]) < events.index(final)


def test_the_launch_serves_the_demo_recogniser_with_demo() -> None:
    from hunyuan_webui.settings import Settings
    from hunyuan_webui.speech_choice import choose_speech

    chosen = choose_speech(replace(Settings(), demo=True))
    assert Path(chosen.settings.asr_model).resolve() == asr.DEMO_ASR_DIR.resolve()
    assert "demo recogniser" in chosen.reason
