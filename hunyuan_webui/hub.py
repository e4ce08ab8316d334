"""The model hub as the launch asks it: offline or not, and whether a repository can be downloaded
from here, with a short deadline (a classroom without internet must not wait on a name lookup).

Used by the translator's launch choice (:mod:`hunyuan_webui.choice`) and the speech recogniser's
(:mod:`hunyuan_webui.speech_choice`); ``huggingface_hub`` is imported only when asked.
"""

from __future__ import annotations

import os
import threading

HUB_TIMEOUT_S = 5.0


def offline() -> bool:
    """``HF_HUB_OFFLINE`` is set: nothing is asked of the network."""
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def downloadable(repo: str) -> bool:
    """Whether the hub answers for ``repo`` within :data:`HUB_TIMEOUT_S` (False offline,
    unreachable, unknown or gated)."""
    if offline():
        return False
    answer: list[bool] = []

    def ask() -> None:
        from huggingface_hub import HfApi

        try:
            HfApi().model_info(repo, timeout=HUB_TIMEOUT_S)
            answer.append(True)
        except Exception:  # unreachable, unknown, gated: not downloadable from here
            answer.append(False)

    thread = threading.Thread(target=ask, name="hymt-hub-probe", daemon=True)
    thread.start()
    thread.join(HUB_TIMEOUT_S + 1)  # name resolution is not covered by the HTTP timeout
    return bool(answer and answer[0])
