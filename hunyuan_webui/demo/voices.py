"""espeak-ng speaks the demo phrases: the demo recogniser is trained on what it says, and the tests
and the benchmark post what it says.

espeak-ng comes from Debian (``apt-get install espeak-ng``; ``bash launch.sh test`` installs it).
Its Mandarin voice is ``cmn`` (``-v zh`` falls back to it), English ``en``. A :class:`Voice` is one
way of saying a phrase: a voice variant (``m3``, ``f2``...), a speed in words per minute (espeak's
default 175) and a pitch (default 50). Output: a WAV file in memory, 22,050 Hz mono.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from hunyuan_webui.errors import TranslatorError

# The espeak-ng voice for a phrase's language.
VOICES = {"zh": "cmn", "en": "en"}
DEFAULT_SPEED = 175
DEFAULT_PITCH = 50


@dataclass(frozen=True)
class Voice:
    variant: str = ""  # espeak-ng's voice variants: m1..m7, f1..f5, klatt... ("" = none)
    speed: int = DEFAULT_SPEED
    pitch: int = DEFAULT_PITCH

    def name(self, lang: str) -> str:
        base = VOICES.get(lang, lang)
        return f"{base}+{self.variant}" if self.variant else base


DEFAULT = Voice()


def available() -> bool:
    return shutil.which("espeak-ng") is not None


def speak(text: str, lang: str, voice: Voice = DEFAULT) -> bytes:
    """``text`` spoken by espeak-ng in ``lang``'s voice, as WAV bytes."""
    program = shutil.which("espeak-ng")
    if program is None:
        raise TranslatorError("espeak-ng is not installed (apt-get install espeak-ng; bash "
                              "launch.sh test installs it).")
    done = subprocess.run([program, "-v", voice.name(lang), "-s", str(voice.speed),
                           "-p", str(voice.pitch), "--stdout", text],
                          capture_output=True, timeout=60, check=False)
    if done.returncode != 0 or not done.stdout.startswith(b"RIFF"):
        raise TranslatorError(f"espeak-ng failed on {text!r}: {done.stderr.decode()[:200]}")
    return fix_wav_sizes(done.stdout)


def fix_wav_sizes(wav: bytes) -> bytes:
    """espeak-ng writing to a pipe cannot seek back to fill the RIFF and data sizes (it leaves
    them 0x7FFFFFFF or 0): set them, so that every reader (Python's wave, browsers) takes it."""
    data = bytearray(wav)
    at = data.find(b"data", 12)
    if at < 0:
        return wav
    data[4:8] = (len(data) - 8).to_bytes(4, "little")
    data[at + 4:at + 8] = (len(data) - at - 8).to_bytes(4, "little")
    return bytes(data)
