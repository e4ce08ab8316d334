"""Streaming text invariants, on a byte-level decoder like the Hunyuan tokenizers'.

Every chunk is valid text (no U+FFFD, never a split grapheme: combining marks, emoji with
modifiers or zero-width joiners), the chunks concatenate to exactly the final text, and scripts
without spaces stream piece by piece instead of all at the end (the TextIteratorStreamer bug).
With a reasoning filter on top (Hy-MT2-30B-A3B), no part of a ``<think>`` block is ever shown and
the same invariants hold for what is.
"""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from hunyuan_webui.engine.textstream import IncrementalText, ReasoningFilter, keeping_tags

SAMPLES = [
    "สวัสดีครับ ขอบคุณมากครับ",  # Thai: no spaces between words
    "សូមអរគុណច្រើន",  # Khmer
    "ကျေးဇူးတင်ပါတယ်",  # Burmese
    "བཀྲ་ཤིས་བདེ་ལེགས།",  # Tibetan
    "ありがとうございます",  # kana only
    "Tiếng Việt có dấu",  # precomposed diacritics
    "Cafe\u0301 noe\u0308l",  # combining marks
    "Family: 👨\u200d👩\u200d👧 thumbs 👍🏽 flag 🇨🇳 heart ❤️",
    "مرحبا بالعالم",
    "Hello, world!",
]


def byte_tokens(text: str, sizes: list[int]) -> list[bytes]:
    data = text.encode("utf-8")
    tokens, i, k = [], 0, 0
    while i < len(data):
        n = sizes[k % len(sizes)]
        tokens.append(data[i:i + n])
        i, k = i + n, k + 1
    return tokens


def run(tokens: list[bytes], tags: tuple[str, str] | None = None) -> tuple[list[str], str]:
    table = {i: tok for i, tok in enumerate(tokens)}
    inner = IncrementalText(lambda ids: b"".join(table[i] for i in ids).decode("utf-8", "replace"))
    stream = ReasoningFilter(inner, tags) if tags else inner
    chunks = [stream.add(i) for i in range(len(tokens))]
    chunks.append(stream.finish())
    return [c for c in chunks if c], inner.emitted


def assert_valid(chunks: list[str], text: str) -> None:
    assert "".join(chunks) == text.strip()
    boundaries = {m.end() for m in regex.finditer(r"\X", text.strip())} | {0}
    position = 0
    for chunk in chunks:
        assert "\ufffd" not in chunk
        position += len(chunk)
        assert position in boundaries, f"chunk boundary inside a grapheme at {position}: {chunks}"


def test_every_sample_streams_valid_chunks_with_one_byte_tokens():
    for text in SAMPLES:
        chunks, final = run(byte_tokens(text, [1]))
        assert final == text
        assert_valid(chunks, text)


def test_scripts_without_spaces_stream_before_the_end():
    for text in SAMPLES[:5]:
        chunks, _ = run(byte_tokens(text, [3, 6]))
        # Held back at most one grapheme cluster: many chunks, not one burst at the end.
        assert len(chunks) >= len(regex.findall(r"\X", text)) // 3, (text, chunks)


def test_trailing_whitespace_is_held_and_leading_whitespace_dropped():
    chunks, final = run(byte_tokens("  Hello world \n", [2]))
    assert final == "Hello world"
    assert "".join(chunks) == "Hello world"


def test_garbage_bytes_in_the_middle_are_dropped_not_shown():
    chunks, final = run([b"ab", b"\xff", b"cd"])
    assert final == "abcd"
    assert all("\ufffd" not in c for c in chunks)


@settings(max_examples=200, deadline=None)
@given(text=st.text(min_size=1, max_size=40).filter(lambda t: t.strip()),
       sizes=st.lists(st.integers(1, 7), min_size=1, max_size=5))
def test_any_text_any_split_keeps_the_invariants(text, sizes):
    text = text.replace("\ufffd", "")
    if not text.strip():
        return
    chunks, final = run(byte_tokens(text, sizes))
    assert final == text.strip()
    assert_valid(chunks, text)


def test_long_answers_decode_only_their_tail_and_stay_exact():
    """Re-decoding every id for every token was quadratic on the engine thread."""
    text = "สวัสดีครับ ขอบคุณมากครับ 👨\u200d👩\u200d👧 Café noël. " * 12
    tokens = byte_tokens(text, [1, 2, 3])
    table = dict(enumerate(tokens))
    lengths = []

    def decode(ids):
        lengths.append(len(ids))
        return b"".join(table[i] for i in ids).decode("utf-8", "replace")

    stream = IncrementalText(decode)
    chunks = [stream.add(i) for i in range(len(tokens))] + [stream.finish()]
    assert_valid([c for c in chunks if c], text)
    assert sum(lengths) < len(tokens) * 120  # a whole decode each time would be ~len²/2


def test_a_tokenizer_that_does_not_decode_additively_falls_back_to_whole_decodes():
    """SentencePiece-style decoders drop a leading space: head + tail != whole."""
    words = [f" w{i}" for i in range(80)]
    stream = IncrementalText(lambda ids: "".join(words[i] for i in ids).lstrip(" "))
    chunks = [stream.add(i) for i in range(80)] + [stream.finish()]
    assert "".join(chunks) == "".join(words).strip()


# -- Hy-MT2-30B-A3B: a <think> block never reaches the user --------------------------------------
THINK = ("<think>", "</think>")
REASONING = "<think>\nThe user wants English. 谢谢 means thanks; keep it short.\n</think>\n\n"


@pytest.mark.parametrize("answer", ["Thank you for your help.", "สวัสดีครับ 👨\u200d👩\u200d👧",
                                    "a < b and <thin> tags stay", "<th"])
@pytest.mark.parametrize("sizes", [[1], [2, 5], [7], [3, 1, 4]])
def test_a_leading_think_block_is_removed_from_the_stream(answer, sizes):
    chunks, _ = run(byte_tokens(REASONING + answer, sizes), THINK)
    assert "".join(chunks) == answer
    assert_valid(chunks, answer)
    for chunk in chunks:  # no piece of the block, not even a tag's first character
        assert "think" not in chunk and "user" not in chunk and "\n" not in chunk


def test_answers_without_a_block_pass_unchanged_and_as_they_come():
    """Only what may be the start of "<think>" is held back, and only until it is not."""
    text = "Thank you for your help, <b>really</b>."
    plain, _ = run(byte_tokens(text, [2]))
    filtered, _ = run(byte_tokens(text, [2]), THINK)
    assert "".join(filtered) == "".join(plain) == text
    assert len(filtered) >= len(plain) - 2


def test_a_block_in_the_middle_and_an_unclosed_block_hide_their_text():
    chunks, _ = run(byte_tokens("Hello <think>secret</think>world", [3]), THINK)
    assert "".join(chunks) == "Hello world"
    chunks, _ = run(byte_tokens("<think>still thinking when it was cut off", [3]), THINK)
    assert chunks == []


@settings(max_examples=200, deadline=None)
@given(answer=st.text(min_size=1, max_size=30).filter(lambda t: t.strip() and "<" not in t),
       thought=st.text(max_size=30).filter(lambda t: "</think>" not in t),
       sizes=st.lists(st.integers(1, 7), min_size=1, max_size=5))
def test_any_block_any_split_shows_exactly_the_answer(answer, thought, sizes):
    answer = answer.replace("\ufffd", "")
    if not answer.strip():
        return
    chunks, _ = run(byte_tokens(f"<think>{thought}</think>\n{answer}", sizes), THINK)
    assert "".join(chunks) == answer.strip()
    assert_valid(chunks, answer)


def test_think_tags_that_are_special_tokens_are_kept_for_the_filter():
    """skip_special_tokens would drop the tags and show the reasoning between them."""
    words = {0: "<think>", 1: "reasoning ", 2: "</think>", 3: "Thanks", 4: "!"}

    class Tokenizer:
        all_special_ids = [0, 2]

        @staticmethod
        def get_vocab():
            return {t: i for i, t in words.items()}

    def decode(ids):  # what tokenizer.decode(ids, skip_special_tokens=True) does
        return "".join(words[i] for i in ids if i not in Tokenizer.all_special_ids)

    assert decode([0, 1, 2, 3]) == "reasoning Thanks"
    keep = keeping_tags(decode, Tokenizer(), THINK)
    assert keep([0, 1, 2, 3]) == "<think>reasoning </think>Thanks"
    stream = ReasoningFilter(IncrementalText(keep), THINK)
    chunks = [stream.add(i) for i in range(5)] + [stream.finish()]
    assert "".join(chunks) == "Thanks!"
    assert keeping_tags(decode, Tokenizer(), ()) is decode
