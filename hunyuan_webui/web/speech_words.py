"""Every word the speech parts of the pages show, in one table keyed for translation.

The teacher's microphone and the students' draft line (``static/live/speech.js``), the
projector's captions (``captions.js``) and the 🎤 of the translator's page
(``web/page/scripts/23-dictate.js``) read their words from here: English and Chinese now; the
class pages' table of 38 languages can take these keys as they are. ``{name}`` fields are filled
in the browser.
"""

from __future__ import annotations

import json

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "mic": "🎤 Speak",
        "micStop": "⏹ Stop speaking",
        "micTitle": "Speak to the class: what you say is written down and translated",
        "listening": "Listening…",
        "connecting": "Connecting the microphone…",
        "reconnecting": "The connection dropped; reconnecting (nothing you say is lost)…",
        "heard": "Heard",
        "fix": "✎ Fix",
        "fixTitle": "Correct the last sentence: every phone gets the correction",
        "save": "Send the correction",
        "cancel": "Cancel",
        "fixed": "Corrected.",
        "insecure": "The microphone needs a secure page: open it on https:// (start the "
                    "server with --https) or on localhost. Typing still works.",
        "noMedia": "This browser cannot use a microphone here. Typing still works.",
        "noWorklet": "This browser cannot capture sound for the class (no AudioWorklet). "
                     "Typing still works.",
        "denied": "The browser did not allow the microphone: allow it (the icon in the address "
                  "bar), then press 🎤 again. Typing still works.",
        "noDevice": "No microphone was found. Typing still works.",
        "noSpeech": "Speech recognition is not available on this server. Typing still works.",
        "busy": "Another tab is already speaking to this class: one microphone at a time.",
        "speaking": "The teacher is speaking…",
        "behind": "Behind: {langs}",
        "behindOne": "{lang} {seconds} s ({n})",
        "lagTitle": "Languages whose translations wait longer than 2 s (sentences waiting)",
        "listen": "Read aloud",
        "dictate": "Dictate",
        "dictateStop": "Stop dictating",
        "captions": "Captions",
        "bigger": "Larger text",
        "smaller": "Smaller text",
        "theme": "Light or dark",
        "background": "Background: normal, transparent, green (for OBS)",
        "waiting": "Waiting for the teacher…",
        "notFound": "No class has this code.",
        "captionsName": "📽 Captions",
    },
    "zh": {
        "mic": "🎤 讲话",
        "micStop": "⏹ 停止讲话",
        "micTitle": "对全班讲话：您说的话会被记录并翻译",
        "listening": "正在听…",
        "connecting": "正在连接麦克风…",
        "reconnecting": "连接中断，正在重新连接（您说的话不会丢失）…",
        "heard": "听到",
        "fix": "✎ 修改",
        "fixTitle": "修改最后一句：每部手机都会收到修改后的内容",
        "save": "发送修改",
        "cancel": "取消",
        "fixed": "已修改。",
        "insecure": "麦克风只能在安全页面上使用：请用 https:// 打开（以 --https 启动服务器）"
                    "或在 localhost 上打开。仍可输入文字。",
        "noMedia": "此浏览器在这里无法使用麦克风。仍可输入文字。",
        "noWorklet": "此浏览器无法为课堂采集声音（不支持 AudioWorklet）。仍可输入文字。",
        "denied": "浏览器未允许使用麦克风：请在地址栏的图标处允许，然后再按 🎤。仍可输入文字。",
        "noDevice": "未找到麦克风。仍可输入文字。",
        "noSpeech": "此服务器没有可用的语音识别。仍可输入文字。",
        "busy": "另一个标签页正在对这个课堂讲话：一次只能用一个麦克风。",
        "speaking": "老师正在讲话…",
        "behind": "翻译落后：{langs}",
        "behindOne": "{lang} {seconds} 秒（{n} 句）",
        "lagTitle": "翻译等待超过 2 秒的语言（等待的句数）",
        "listen": "朗读",
        "dictate": "语音输入",
        "dictateStop": "停止语音输入",
        "captions": "字幕",
        "bigger": "放大文字",
        "smaller": "缩小文字",
        "theme": "浅色或深色",
        "background": "背景：普通、透明、绿色（用于 OBS）",
        "waiting": "等待老师发言…",
        "notFound": "没有这个代码的课堂。",
        "captionsName": "📽 字幕",
    },
}


def script() -> str:
    """The table as the class pages load it (``window.HYLiveWords``)."""
    return f"window.HYLiveWords = {json.dumps(WORDS, ensure_ascii=False)};\n"
