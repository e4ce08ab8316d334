"""Streaming text invariants, on a byte-level decoder like the Hunyuan tokenizers'.

Every chunk is valid text (no U+FFFD, never a split grapheme: combining marks, emoji with
modifiers or zero-width joiners), the chunks concatenate to exactly the final text, and scripts
without spaces stream piece by piece instead of all at the end (the TextIteratorStreamer bug).
"""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from hunyuan_webui.engine.textstream import IncrementalText

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


def run(tokens: list[bytes]) -> tuple[list[str], str]:
    table = {i: tok for i, tok in enumerate(tokens)}
    stream = IncrementalText(lambda ids: b"".join(table[i] for i in ids).decode("utf-8", "replace"))
    chunks = [stream.add(i) for i in range(len(tokens))]
    chunks.append(stream.finish())
    return [c for c in chunks if c], stream.emitted


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
