"""Which recogniser the launch picks (hunyuan_webui.speech_choice), with made-up machines and hub
answers, and the speech flags as the command line and the environment give them."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from hunyuan_webui import settings as settings_mod
from hunyuan_webui.errors import InputError, ModelLoadError
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech import SpeechState
from hunyuan_webui.speech_choice import build_speech, choose_speech


@dataclass
class FakeProbe:
    gpu_count: int = 0
    core_count: int = 8
    in_cache: set[str] = field(default_factory=set)
    on_hub: set[str] = field(default_factory=set)
    asked: list[str] = field(default_factory=list)

    def gpus(self) -> int:
        return self.gpu_count

    def cores(self) -> int:
        return self.core_count

    def cached(self, repo: str) -> bool:
        self.asked.append(repo)
        return repo in self.in_cache

    def downloadable(self, repo: str) -> bool:
        return repo in self.on_hub


HUB = {"mobiuslabsgmbh/faster-whisper-large-v3-turbo", "Systran/faster-whisper-small",
       "Systran/faster-whisper-base"}


def test_a_gpu_gets_large_v3_turbo_a_cpu_small_or_base() -> None:
    gpu = choose_speech(Settings(), FakeProbe(gpu_count=1, on_hub=HUB))
    assert gpu.settings.asr_model == "large-v3-turbo" and "float16" in gpu.reason
    cpu = choose_speech(Settings(), FakeProbe(on_hub=HUB))
    assert cpu.settings.asr_model == "small" and "int8" in cpu.reason
    assert not gpu.banner and not cpu.banner
    laptop = choose_speech(Settings(), FakeProbe(core_count=4, on_hub=HUB))
    assert laptop.settings.asr_model == "base" and "4 CPU cores" in laptop.reason
    # --device cpu on a GPU machine: the CPU's choice.
    assert choose_speech(Settings(device="cpu"), FakeProbe(gpu_count=1, on_hub=HUB)
                         ).settings.asr_model == "small"


def test_offline_the_cached_model_is_taken() -> None:
    probe = FakeProbe(in_cache={"Systran/faster-whisper-base"})
    chosen = choose_speech(Settings(), probe)
    assert chosen.settings.asr_model == "base" and "cached" in chosen.reason


def test_nothing_to_be_had_means_no_speech_with_a_banner() -> None:
    chosen = choose_speech(Settings(), FakeProbe())
    assert chosen.settings.asr_model == ""
    assert chosen.banner.startswith("**No speech recogniser.**")
    assert "--asr-model" in chosen.banner and "typing" in chosen.banner
    speech = build_speech(chosen.settings, chosen)
    status = speech.status()
    assert status.state == SpeechState.OFF and "--asr-endpoint" in status.reason
    with pytest.raises(ModelLoadError) as refused:
        speech.transcribe(b"RIFF", "zh")
    assert refused.value.http_status == 503


def test_named_model_endpoint_and_off_need_no_probe() -> None:
    class NoProbe:
        def __getattr__(self, name: str) -> None:
            raise AssertionError(f"the probe was asked {name}")

    assert choose_speech(Settings(asr_model="medium"), NoProbe()).settings.asr_model == "medium"
    remote = choose_speech(Settings(asr_endpoint="http://user:pw@10.0.0.2:8000/v1"), NoProbe())
    assert "10.0.0.2" in remote.reason and "pw" not in remote.reason
    off = choose_speech(Settings(speech=False), NoProbe())
    assert off.settings.asr_model == "" and "--no-speech" in off.reason
    assert build_speech(off.settings).status().reason == "Speech is turned off (--no-speech)."


def test_flags_and_environment() -> None:
    parser = settings_mod.build_parser()
    settings, _ = settings_mod.from_sources(
        ["--no-speech", "--asr-model", "small", "--max-audio-bytes", "1000"], env={},
        parser=parser)
    assert (settings.speech, settings.asr_model, settings.max_audio_bytes) == (False, "small", 1000)
    settings, _ = settings_mod.from_sources([], env={"HYMT_ASR_ENDPOINT": "http://h:1/v1",
                                                     "HYMT_ASR_API_KEY": "secret"},
                                            parser=settings_mod.build_parser())
    assert settings.asr_endpoint == "http://h:1/v1"
    assert settings.public()["asr_api_key"] == "***"
    with pytest.raises(InputError, match="max-audio-bytes"):
        Settings(max_audio_bytes=0)


def test_a_recogniser_that_cannot_be_had_says_why(tmp_path, monkeypatch) -> None:
    """Loading fails in the background: the state says so with what to do, nothing raises."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    broken = build_speech(Settings(asr_model=str(tmp_path), warmup=False))  # an empty folder
    status = broken.wait_ready(60)
    assert status.state == SpeechState.FAILED
    assert "CTranslate2 Whisper directory" in status.reason
    missing = build_speech(Settings(asr_model="Systran/faster-whisper-small", warmup=False))
    status = missing.wait_ready(60)
    assert status.state == SpeechState.FAILED
    assert "HF_HUB_OFFLINE" in status.reason and "--asr-model DIR" in status.reason
