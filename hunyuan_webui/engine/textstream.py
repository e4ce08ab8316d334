"""Token ids in, always-valid text deltas out.

transformers' ``TextIteratorStreamer`` holds text back until a space, a newline or a CJK ideograph,
so Thai, Khmer, Burmese, Tibetan and kana-only text arrive all at once at the end. Instead, as
nanochat's server did, we decode the accumulated ids and emit the new suffix, holding back:

* trailing U+FFFD (a multi-byte character whose bytes have not all arrived yet);
* the last grapheme cluster (the next token may add a combining mark, a variation selector or a
  zero-width-joiner part of an emoji to it);
* trailing whitespace (so the final text can be right-stripped without breaking the rule that the
  chunks concatenate to exactly the final text), and leading whitespace is dropped.

A U+FFFD that is followed by more text is garbage the model produced; it is removed everywhere.

:class:`ReasoningFilter` goes on top for models that may think aloud first (``<think>…</think>``):
the block never reaches the user, and the chunks still concatenate to the final text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import regex

_LAST_CLUSTER = regex.compile(r"\X\Z")
_REPLACEMENT = "\ufffd"
SETTLE_EVERY = 32  # tokens
CONTEXT_TOKENS = 4
CLUSTER_WINDOW = 64  # characters; longer than any grapheme cluster a model writes


class IncrementalText:
    """Turn a growing list of token ids into text deltas that are always safe to show."""

    def __init__(self, decode: Callable[[Sequence[int]], str]) -> None:
        self._decode = decode
        self._ids: list[int] = []
        self._emitted = ""
        # Decoding all ids for every token is quadratic in the answer's length, on the engine's
        # thread. The text of a settled head is kept instead and only the tail is decoded, for
        # as long as the tokenizer is seen to decode additively (byte-level BPE is).
        self._head_text = ""
        self._head_ids = 0
        self._additive = True

    @property
    def emitted(self) -> str:
        return self._emitted

    def add(self, token_id: int) -> str:
        """Append one token; return the text that became safe to show (maybe empty)."""
        self._ids.append(token_id)
        stable = self._text().rstrip(_REPLACEMENT)
        return self._advance(_clean(_safe_prefix(stable)))

    def finish(self) -> str:
        """All tokens are in: return whatever was held back (trailing whitespace excluded)."""
        final = _clean(self._decode(self._ids).rstrip(_REPLACEMENT))
        return self._advance(final.rstrip(), final=True)

    def _text(self) -> str:
        if not self._additive:
            return self._decode(self._ids)
        # The tail is decoded with a few settled tokens in front, as TGI does, so tokenizers that
        # treat the first token specially (SentencePiece drops its leading space) decode it right.
        start = max(0, self._head_ids - CONTEXT_TOKENS)
        context = self._decode(self._ids[start:self._head_ids])
        both = self._decode(self._ids[start:])
        if not both.startswith(context):
            self._additive = False
            return self._decode(self._ids)
        tail = both[len(context):]
        if len(self._ids) - self._head_ids < SETTLE_EVERY or tail.endswith(_REPLACEMENT):
            return self._head_text + tail
        # Settle the head, once checked against a whole decode (once per SETTLE_EVERY tokens).
        whole = self._decode(self._ids)
        if whole == self._head_text + tail:
            self._head_text, self._head_ids = whole, len(self._ids)
        else:
            self._additive = False
        return whole

    def _advance(self, candidate: str, final: bool = False) -> str:
        candidate = candidate.lstrip()
        if not final:
            candidate = candidate.rstrip()
        if len(candidate) <= len(self._emitted) or not candidate.startswith(self._emitted):
            return ""
        delta = candidate[len(self._emitted):]
        self._emitted = candidate
        return delta


def _safe_prefix(text: str) -> str:
    """``text`` without its last grapheme cluster (which may still grow)."""
    start = max(0, len(text) - CLUSTER_WINDOW)  # a cluster is short: look at the end only
    match = _LAST_CLUSTER.search(text, start)
    return text[: match.start()] if match else text


def _clean(text: str) -> str:
    return text.replace(_REPLACEMENT, "")


class ReasoningFilter:
    """An :class:`IncrementalText` (or anything with its ``add``/``finish``) whose deltas never
    show a ``<think>…</think>`` block (Hy-MT2-30B-A3B's chat format may open its answer with one).

    A delta that ends in what may be the start of the opening tag is held back until it is known
    not to be one; inside a block everything is dropped, up to and including the closing tag; the
    whitespace after a leading block is dropped, and trailing whitespace is held as the inner text
    holds it. So the visible chunks still concatenate to exactly the final visible text. A block
    that never closes hides everything after its opening tag.
    """

    def __init__(self, text: Any, tags: tuple[str, str]) -> None:
        self._text = text
        self._open, self._close = tags
        self._pending = ""  # not yet known to be visible (a tag may be starting)
        self._inside = False
        self._held = ""  # trailing whitespace, shown once text follows it
        self._started = False  # something visible has gone out

    def add(self, token_id: int) -> str:
        return self._feed(self._text.add(token_id), final=False)

    def finish(self) -> str:
        return self._feed(self._text.finish(), final=True)

    def _feed(self, delta: str, final: bool) -> str:
        self._pending += delta
        visible = ""
        while True:
            if self._inside:
                end = self._pending.find(self._close)
                if end < 0:  # keep what may be the start of the closing tag
                    keep = 0 if final else len(self._close) - 1
                    self._pending = self._pending[-keep:] if keep else ""
                    break
                self._pending = self._pending[end + len(self._close):]
                self._inside = False
                continue
            start = self._pending.find(self._open)
            if start >= 0:
                visible += self._pending[:start]
                self._pending = self._pending[start + len(self._open):]
                self._inside = True
                continue
            keep = 0 if final else _partial_tag(self._pending, self._open)
            visible += self._pending[:len(self._pending) - keep]
            self._pending = self._pending[len(self._pending) - keep:]
            break
        return self._emit(visible, final)

    def _emit(self, visible: str, final: bool) -> str:
        text = self._held + visible
        if not self._started:
            text = text.lstrip()
        out = text.rstrip()
        self._held = "" if final else text[len(out):]
        self._started = self._started or bool(out)
        return out


def _partial_tag(text: str, tag: str) -> int:
    """Length of the longest end of ``text`` that is a proper beginning of ``tag``."""
    for n in range(min(len(text), len(tag) - 1), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


def keeping_tags(decode: Callable[..., str], tokenizer: Any,
                 tags: Sequence[str]) -> Callable[[Sequence[int]], str]:
    """``decode`` (which skips special tokens) made to keep ``tags`` where a tokenizer has them
    as special tokens, so that :class:`ReasoningFilter` sees where a block starts and ends."""
    special = set(getattr(tokenizer, "all_special_ids", ()))
    vocab = tokenizer.get_vocab()
    kept = {vocab[t]: t for t in tags if t in vocab and vocab[t] in special}
    if not kept:
        return decode

    def decode_keeping(ids: Sequence[int]) -> str:
        parts, run = [], []
        for i in ids:
            if i in kept:
                parts += [decode(run), kept[i]]
                run = []
            else:
                run.append(i)
        return "".join([*parts, decode(run)])

    return decode_keeping
