"""``.srt``: cues parsed and validated with ``srt``; indices, timings and positions untouched."""

from __future__ import annotations

import re
import unicodedata

from hunyuan_webui.errors import InputError
from hunyuan_webui.files.common import Batch, Finish, Text, first_line

_TAGS_HEAD_RE = re.compile(r"^(?:\s*(?:<[^<>]*>|\{[^{}]*\}))*\s*")
_TAGS_TAIL_RE = re.compile(r"(?:\s*(?:<[^<>]*>|\{[^{}]*\}))*\s*$")
_EOL_RE = re.compile(r"\r\n|\r|\n")
_INDEX_RE = re.compile(r"\s*\d+\s*")
_TS = r"(\d+):([0-5]\d):([0-5]\d)(?:[,.](\d{1,3}))?"
# A cue's timing line, strictly: two timestamps, then nothing or position fields after a space.
_TIMING_RE = re.compile(rf"\s*{_TS} *-[ -] *> *{_TS}(?:[ \t]+\S.*)?\s*")


def _is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return (
        0x2E80 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or 0xFF00 <= cp <= 0xFFEF
        or 0x20000 <= cp <= 0x3FFFF
    )


def _join_lines(parts: list[str]) -> str:
    out = ""
    for part in parts:
        if out and not (_is_cjk(out[-1]) and _is_cjk(part[0])):
            out += " "
        out += part
    return out


def _wrap(text: str, k: int) -> list[str]:
    """Cut ``text`` into at most ``k`` non-empty lines of similar length."""
    if k <= 1 or not text:
        return [text]
    if any(ch.isspace() for ch in text):
        candidates = [i for i, ch in enumerate(text) if ch.isspace()]
    elif sum(_is_cjk(ch) for ch in text) * 2 >= len(text):
        candidates = [
            i for i in range(1, len(text)) if unicodedata.category(text[i])[0] not in "PM"
        ]
    else:
        return [text]
    lines, start = [], 0
    for j in range(1, k):
        target = start + (len(text) - start) / (k - j + 1)
        usable = [c for c in candidates if c > start]
        if not usable:
            break
        cut = min(usable, key=lambda c: abs(c - target))
        piece = text[start:cut].strip()
        if not piece:
            break
        lines.append(piece)
        start = cut
    rest = text[start:].strip()
    if rest:
        lines.append(rest)
    return lines


class _Cue:
    """One subtitle's text: translated as one or more units, re-assembled in ``finish``."""

    def __init__(self, content: str, batch: Batch) -> None:
        self.content = content
        m = _EOL_RE.search(content)
        self.eol = m.group(0) if m else "\n"
        self.frames = []  # (leading tags, text, trailing tags) per line
        for line in _EOL_RE.split(content):
            head = _TAGS_HEAD_RE.match(line).end()
            tail = _TAGS_TAIL_RE.search(line, head).start()
            self.frames.append((line[:head], line[head:tail], line[tail:]))
        inner = [f[1] for f in self.frames if f[1]]
        self.dialogue = len(inner) > 1 and all(
            t.startswith(("-", "\u2013", "\u2014")) for t in inner
        )
        if self.dialogue:
            self.units = [batch.add_text(t) for t in inner]
        else:
            unit = batch.add_text(_join_lines(inner))
            self.units = [unit] if batch.docs[unit].segments else []

    def finish(self, rendered: list[str]) -> str:
        if not self.units:
            return self.content
        texts = iter(rendered[u] for u in self.units)
        if not self.dialogue:
            if rendered[self.units[0]] == _join_lines([f[1] for f in self.frames if f[1]]):
                return self.content  # unchanged: keep the original line breaks
            k = sum(1 for f in self.frames if f[1])
            texts = iter(_wrap(next(texts), k))
        out, pending = [], ""
        for pre, inner, post in self.frames:
            if not inner:
                out.append(pre + post)
                continue
            text = next(texts, None)
            if text is None:  # the translation needs fewer lines: keep this line's tags
                pending += pre + post
                continue
            out.append(pre + text + post)
        if pending:
            last = max(i for i, f in enumerate(self.frames[: len(out)]) if f[1])
            out[last] += pending
        return self.eol.join(out)


def _check_timings(text: str) -> None:
    """Every line in a timing's place (after a block's index) is a valid timing that does not
    end before it starts. The ``srt`` library reads ``00:00:0x,500`` as ``00:00:0`` plus
    position text, which makes the cue end before it starts and players drop what follows."""
    lines = _EOL_RE.split(text.lstrip("\ufeff"))
    for number, line in enumerate(lines[1:], 2):
        index, before = lines[number - 2], lines[number - 3] if number > 2 else ""
        if not _INDEX_RE.fullmatch(index) or before.strip():
            continue
        match = _TIMING_RE.fullmatch(line)
        if match is None:
            raise InputError(
                f"This .srt file is malformed at line {number}: {line.strip()[:60]!r} is not a "
                "valid timing (expected like 00:00:01,000 --> 00:00:02,500).")
        start, end = _millis(match.groups()[:4]), _millis(match.groups()[4:])
        if end < start:
            raise InputError(f"This .srt file is malformed at line {number}: the subtitle ends "
                             f"before it starts ({line.strip()[:60]!r}).")


def _millis(parts: tuple[str | None, ...]) -> int:
    hours, minutes, seconds, fraction = parts
    ms = int((fraction or "0").ljust(3, "0"))
    return ((int(hours or 0) * 60 + int(minutes or 0)) * 60 + int(seconds or 0)) * 1000 + ms


def srt_file(src: Text, batch: Batch) -> Finish:
    import srt

    text = src.text
    _check_timings(text)
    try:
        subs = list(srt.parse(text))
    except srt.SRTParseError as exc:
        line = text.count("\n", 0, exc.expected_start) + 1
        snippet = exc.unmatched_content.strip()[:60]
        raise InputError(
            f"This .srt file is malformed at line {line}: {snippet!r} is not a subtitle block "
            "(index, then a timing like 00:00:01,000 --> 00:00:02,500, then text)."
        ) from None
    except ValueError as exc:
        raise InputError(f"This .srt file is malformed: {first_line(exc)}") from None
    if not subs:
        raise InputError("This .srt file contains no subtitles (expected index, timing, text).")
    spans, cues = [], []
    for match in srt.SRT_REGEX.finditer(text):
        a, b = match.span(5)
        spans.append((a, b))
        cues.append(_Cue(text[a:b], batch) if text[a:b].strip() else None)

    def finish(rendered: list[str]) -> bytes:
        out, pos = [], 0
        for (a, b), cue in zip(spans, cues, strict=True):
            out.append(text[pos:a])
            out.append(cue.finish(rendered) if cue else text[a:b])
            pos = b
        out.append(text[pos:])
        return src.encode("".join(out))

    return finish
