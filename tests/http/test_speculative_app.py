"""What issue 34 says must show, from outside: ``app.py --demo`` and ``app.py --demo
--no-speculative`` give the same greedy answers for every demo phrase through ``POST
/v1/translate`` (and for re-translations with a ``previous`` translation); and ``app.py --model
DIR`` with a bf16 checkpoint says bf16 in ``/ready`` on a CPU that computes bf16 natively (fp32
elsewhere), with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from apphelpers import app_process

from hunyuan_webui.demo.model import ensure_demo_model, load_phrases
from hunyuan_webui.engine.cpuinfo import native_bf16

pytestmark = pytest.mark.slow

PHRASES = load_phrases()


def _translate_all(url: str) -> tuple[list[str], list[str], dict]:
    import httpx

    with httpx.Client(base_url=url, timeout=120, trust_env=False) as client:
        plain, again = [], []
        for p in PHRASES:
            body = {"text": p.source, "source_lang": p.source_lang, "target_lang": p.target_lang,
                    "options": {"deterministic": True}, "cache": False}
            r = client.post("/v1/translate", json=body)
            assert r.status_code == 200, r.text
            plain.append(r.json()["translation"])
            r = client.post("/v1/translate", json={**body, "previous": p.target[:len(p.target) // 2]})
            assert r.status_code == 200, r.text
            again.append(r.json()["translation"])
        return plain, again, client.get("/ready").json()


def test_the_demo_answers_the_same_with_and_without_speculative_decoding() -> None:
    with app_process() as app:
        on, on_again, ready_on = _translate_all(app.url)
    with app_process("--no-speculative") as app:
        off, off_again, ready_off = _translate_all(app.url)
    assert on == off == [p.target for p in PHRASES]
    assert on_again == off_again == on
    assert ready_on["extra"]["speculative"]["on"] is True
    assert ready_on["extra"]["speculative"]["accepted"] > 0
    assert ready_off["extra"]["speculative"] == {"on": False}


def test_previous_must_match_the_texts() -> None:
    import httpx

    with app_process() as app, httpx.Client(base_url=app.url, timeout=60,
                                             trust_env=False) as client:
        r = client.post("/v1/translate", json={"text": ["a", "b"], "target_lang": "zh",
                                                "previous": ["x"]})
        assert r.status_code == 400 and "previous" in r.text
        r = client.post("/v1/translate", json={"text": ["Hello", "Good morning."],
                                                "source_lang": "en", "target_lang": "zh",
                                                "previous": ["你", ""],
                                                "options": {"deterministic": True}})
        assert r.status_code == 200, r.text
        assert r.json()["translation"] == ["你好", "早上好。"]


def _bf16_copy(directory: Path) -> Path:
    """The demo checkpoint stored in bf16, as the real Hy-MT checkpoints are."""
    import shutil

    import torch
    from transformers import AutoModelForCausalLM

    source = ensure_demo_model()
    model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.bfloat16)
    model.save_pretrained(directory, safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "hymt.json"):
        shutil.copy(source / name, directory / name)
    return directory


def test_a_bf16_checkpoint_runs_in_bf16_where_the_cpu_computes_it(tmp_path: Path) -> None:
    import httpx

    directory = _bf16_copy(tmp_path / "demo-bf16")
    want = "bf16" if native_bf16() else "fp32"
    with app_process("--model", str(directory), demo=False) as app:
        ready = httpx.get(f"{app.url}/ready", timeout=30, trust_env=False).json()
        assert ready["dtype"] == want, ready
        reason = ready["extra"]["dtype_reason"]
        assert ("natively" in reason) if want == "bf16" else ("no native bf16" in reason)
        r = httpx.post(f"{app.url}/v1/translate", timeout=60, trust_env=False, json={
            "text": "谢谢你的帮助。", "source_lang": "zh", "target_lang": "en",
            "options": {"deterministic": True}})
        assert r.json()["translation"] == "Thank you for your help."
    with app_process("--model", str(ensure_demo_model()), demo=False) as app:  # fp32 stays fp32
        assert httpx.get(f"{app.url}/ready", timeout=30, trust_env=False).json()["dtype"] == "fp32"
