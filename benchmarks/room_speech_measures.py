"""What :mod:`benchmarks.room_speech` measures besides the class's own times: the CPU the server
and its engine spent (from /proc), the recogniser's pace on the lesson's sound in this process,
and the software and machine the run was made on."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

from benchmarks.room_speech import SENTENCES, Config


def cpu_seconds(pids: list[int]) -> list[float]:
    """User + system CPU seconds of each process (from /proc; 0 when it is gone)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = []
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            out.append((int(fields[11]) + int(fields[12])) / tick)
        except (OSError, ValueError, IndexError):
            out.append(0.0)
    return out


def cpu_share(before: list[float], after: list[float], wall: float) -> dict[str, float]:
    """Each process's share of the whole machine (all its cores) over ``wall`` seconds."""
    cores = len(os.sched_getaffinity(0))
    names = ("server", "engine")
    return {names[i]: round((a - b) / (wall * cores), 3)
            for i, (b, a) in enumerate(zip(before, after, strict=True))}


def recogniser_pace(cfg: Config) -> dict[str, Any]:
    """The lesson's sound through the streaming Listener on the demo recogniser, in this
    process: seconds of computing per second of sound (wall: the real-time factor; CPU: over
    the machine's cores, its share of the machine while it keeps up with a teacher)."""
    from benchmarks.speech_class import FRAME, frames, lesson_sound
    from hunyuan_webui.demo.asr import ensure_demo_asr
    from hunyuan_webui.settings import Settings
    from hunyuan_webui.speech.audio import RATE
    from hunyuan_webui.speech_choice import build_speech

    speech = build_speech(Settings(asr_model=str(ensure_demo_asr()), demo=True))
    try:
        if speech.wait_ready(300).state != "ready":
            return {"error": speech.status().reason}
        said = [SENTENCES[i % len(SENTENCES)] for i in range(cfg.sentences)]
        sound, _ = lesson_sound(said, "zh", cfg.pause_s)
        listener = speech.listener("zh")
        heard, wall, cpu = [], time.perf_counter(), time.process_time()
        for chunk in frames(sound):
            heard += listener.feed(chunk)
        heard += listener.finish()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        speech.close()
    seconds = sound.size / RATE
    finals = [e.text for e in heard if type(e).__name__ == "Final" and e.text]
    return {"sound_s": round(seconds, 1), "frame_s": FRAME / RATE,
            "rtf": round(wall / seconds, 4),
            "cpu_share": round(cpu / seconds / len(os.sched_getaffinity(0)), 4),
            "recognised_exactly": finals == said, "model": speech.status().model}


def versions() -> dict[str, str]:
    """The software that was measured: this repository's commit and the libraries in play."""
    import importlib.metadata as meta
    import platform
    import subprocess

    out = {"python": platform.python_version()}
    for name in ("torch", "transformers", "ctranslate2", "faster-whisper", "silero-vad",
                 "uvicorn", "websockets", "httpx"):
        with contextlib.suppress(meta.PackageNotFoundError):
            out[name] = meta.version(name)
    root = Path(__file__).resolve().parent.parent
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                                       capture_output=True, text=True, timeout=10).stdout.strip()
        espeak = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True,
                                timeout=10).stdout.split()
        out["espeak-ng"] = espeak[3] if len(espeak) > 3 else " ".join(espeak)
    return out


def machine(load_before: tuple[float, ...]) -> dict[str, Any]:
    from benchmarks.report import cpu_model

    return {"cores": len(os.sched_getaffinity(0)), "processor": cpu_model(),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "nice": os.nice(0)}
