"""Every word the speech parts of the pages show: the ``speech`` tables of
:mod:`hunyuan_webui.web.words` (English and Chinese now; the class pages' 38 languages can take
these keys as they are).

The teacher's microphone and the students' draft line (``static/live/speech.js``), the
projector's captions (``captions.js``) and the 🎤 of the translator's page
(``web/page/scripts/23-dictate.js``) read them as ``window.HYLiveWords``. ``{name}`` fields are
filled in the browser.
"""

from __future__ import annotations

import json

from hunyuan_webui.web import words

WORDS: dict[str, dict[str, str]] = words.tables("speech")


def script() -> str:
    """The table as the class pages load it (``window.HYLiveWords``)."""
    return f"window.HYLiveWords = {json.dumps(WORDS, ensure_ascii=False)};\n"
