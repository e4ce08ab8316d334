"""What the demo recogniser hears in training: every demo phrase spoken by espeak-ng in several
ways, shifted and mixed with a little noise, the beginnings of phrases (so that a draft grows word
by word), and sounds that are no speech at all (silence, hiss, tones) labelled as such.

Everything is deterministic: the variations are a fixed table, and the shifts and noise come from
one seeded generator.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from hunyuan_webui.demo.phrases import Phrase
from hunyuan_webui.demo.voices import DEFAULT, VOICES, Voice, speak
from hunyuan_webui.speech.audio import RATE, decode

# How each phrase is spoken besides espeak-ng's default voice at its default speed and pitch.
VARIANTS = ("m3", "f2", "f4", "m7", "klatt")
SPEEDS = (145, 205)
PITCHES = (35, 65)
MIXED = (Voice("m3", 160, 60), Voice("f2", 195, 42), Voice("klatt", 185, 55))
PREFIXED = (DEFAULT, Voice(variant="m3"), Voice(variant="f2"))  # voices whose beginnings are heard
PREFIX_SHARES = (0.4, 0.6, 0.8)  # the beginnings a draft sees: how much of the phrase was heard
NO_SPEECH = -1  # a clip's language index when it holds no speech


@dataclass(frozen=True)
class Clip:
    samples: np.ndarray  # 16 kHz mono float32
    text: str  # what the model should write ("" for no speech)
    lang: str  # the phrase's language ("" for no speech)
    default_voice: bool = False  # espeak-ng's default voice and speed, the whole phrase


def spoken_phrases(phrases: Sequence[Phrase]) -> list[tuple[str, str]]:
    """The demo phrases' source sides, once each, in the languages espeak-ng speaks here; not
    the copy-heavy rows (:attr:`Phrase.copies`): spoken, ``555-0199``, ``parse_args(argv)`` or a
    URL are not said as they are written, so no recogniser could write them back exactly. The
    shipped ``assets/demo-asr`` was trained on these 29 (its sidecar's ``phrases``)."""
    seen: dict[tuple[str, str], None] = {}
    for p in phrases:
        if p.source_lang in VOICES and not p.copies:
            seen[(p.source_lang, p.source)] = None
    return list(seen)


def voices() -> list[Voice]:
    out = [DEFAULT]
    out += [Voice(variant=v) for v in VARIANTS]
    out += [Voice(speed=s) for s in SPEEDS]
    out += [Voice(pitch=p) for p in PITCHES]
    return out + list(MIXED)


def speech_clips(phrases: Sequence[Phrase], rng: np.random.Generator) -> Iterator[Clip]:
    for lang, text in spoken_phrases(phrases):
        for voice in voices():
            raw = decode(speak(text, lang, voice))
            samples = trim(raw)
            default = voice == DEFAULT
            yield Clip(raw, text, lang, default)
            # The same words again, shifted within the window and with a little hiss.
            yield Clip(noisy(shifted(samples, rng), rng, snr_db=rng.uniform(18, 35)), text, lang)
            if voice in PREFIXED:
                for share in PREFIX_SHARES:
                    yield Clip(samples[: int(samples.size * share)], prefix(text, lang, share),
                               lang)


def prefix(text: str, lang: str, share: float) -> str:
    """The part of ``text`` said in the first ``share`` of its sound: words, or characters for
    languages written without spaces. Never the closing punctuation (the phrase is not over)."""
    body = text.rstrip("。.!！?？👍❤️ ")
    if " " in body:
        words = body.split(" ")
        return " ".join(words[: max(1, round(len(words) * share))])
    return body[: max(1, round(len(body) * share))]


def no_speech_clips(rng: np.random.Generator, count: int = 48) -> Iterator[Clip]:
    """Silence, hiss, hum and tones: the recogniser must write nothing for them."""
    for i in range(count):
        seconds = float(rng.uniform(0.5, 12.0))
        n = int(seconds * RATE)
        kind = i % 6
        t = np.arange(n) / RATE
        if kind == 0:
            samples = np.zeros(n, dtype=np.float32)
        elif kind == 1:
            samples = rng.normal(0, 10 ** rng.uniform(-4, -0.5), n)
        elif kind == 2:  # brown noise: rumble
            walk = np.cumsum(rng.normal(0, 1, n))
            samples = (walk - walk.mean()) / (np.abs(walk).max() + 1e-9) * rng.uniform(0.02, 0.5)
        elif kind == 3:  # a chord: notes held like music
            notes = rng.choice([220.0, 261.6, 329.6, 392.0, 440.0, 523.3], size=3)
            samples = sum(np.sin(2 * np.pi * f * t) for f in notes) * rng.uniform(0.05, 0.25)
        elif kind == 4:  # a melody: a note every quarter second
            notes = rng.choice([196.0, 246.9, 293.7, 349.2, 440.0, 587.3], size=n // 4000 + 1)
            freq = np.repeat(notes, 4000)[:n]
            samples = np.sin(2 * np.pi * np.cumsum(freq) / RATE) * rng.uniform(0.05, 0.3)
        else:  # clicks and knocks
            samples = np.zeros(n)
            for at in rng.integers(0, n, size=int(seconds * 3)):
                samples[at:at + 80] = rng.uniform(-0.6, 0.6)
        yield Clip(np.asarray(samples, dtype=np.float32), "", "")


def trim(samples: np.ndarray, floor: float = 1e-3) -> np.ndarray:
    """The sound without the silence espeak-ng puts before and after it."""
    loud = np.flatnonzero(np.abs(samples) > floor)
    return samples[loud[0]:loud[-1] + 1] if loud.size else samples


def shifted(samples: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Silence before and after: where an utterance starts in its window varies."""
    before = np.zeros(int(rng.uniform(0, 0.6) * RATE), dtype=np.float32)
    after = np.zeros(int(rng.uniform(0, 0.6) * RATE), dtype=np.float32)
    return np.concatenate([before, samples * rng.uniform(0.5, 1.0), after]).astype(np.float32)


def noisy(samples: np.ndarray, rng: np.random.Generator, snr_db: float) -> np.ndarray:
    power = float(np.mean(samples ** 2)) or 1e-8
    noise = rng.normal(0, np.sqrt(power / 10 ** (snr_db / 10)), samples.size)
    return np.clip(samples + noise, -1, 1).astype(np.float32)
