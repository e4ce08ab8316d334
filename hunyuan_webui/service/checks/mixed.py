"""Half a translation: an answer that leaves a large part of its source as it was.

Three shapes, each beyond names, terms, numbers, code, addresses, quotations and the glossary's
terms (:mod:`.same`):

- **letters in the source's script where the target writes another** (English words left in a
  Chinese answer, Chinese in an English one, kana in a Chinese one): at least
  :data:`HALF_SHARE` of the answer's letters, and at least three words of running text (a
  lower-case word: "machine learning" alone may be a term) or four Han or kana characters;
- **a Chinese clause in a Japanese answer** (Han is shared by zh and ja): a clause (between
  punctuation) with no kana in an answer that has some, whose Han is one Japanese does not
  write (outside the Jōyō and Jinmeiyō lists, from **kanji-lists**: 们 这 说 吗 你...), or
  Chinese grammar (two of 是 的 了 不 我 他 在 有 也 都 就 和), or eight characters and more with no
  kana at all; such clauses carrying :data:`HALF_SHARE` of the answer;
- **the source's own words where both share a script** (en->fr, es->pt): runs of four or more
  of the source's words in its order, outside quotations, making :data:`COPIED_WORDS` of the
  answer's words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from hunyuan_webui.detect.scripts import HAN, KANA
from hunyuan_webui.service.checks.same import WORD, blank, name_like
from hunyuan_webui.service.checks.writing import (
    CASED,
    CHINESE,
    SCRIPTS,
    close,
    decides_early,
    letters,
    script_of,
)

HALF_SHARE = 0.25  # of the answer's letter weight left in the source's script
MIN_WORDS = 3  # untranslated words of a spaced script, at least
COPIED_RUN = 8  # characters copied from the source as one run: a kept command or name
MIN_WEIGHT = 8  # ... or letter weight of an unspaced one (4 Han or kana)
COPIED_WORDS = 0.35  # of the answer's words in runs copied from the source
RUN_WORDS = 4  # a run of the source's words this long at least
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|„[^“”\n]*[“”]|«[^»\n]*»|「[^」\n]*」|『[^』\n]*』"
                     r"|\([^)\n]*\)|（[^）\n]*）|'[^'\n]{2,}'")
_CLAUSE = re.compile(r"[、。，,.!?！？；;：:\n「」『』（）()\s・]+")
# Chinese function words: Japanese writes them rarely outside compounds (経済的, 現在, 不可能);
# and Chinese words Japanese does not use (it writes 今日, 明日, それから, しかし...), worth two.
CHINESE_GRAMMAR = frozenset("是的了不我他在有也都就和你她们这那吗呢吧很还没给让对说")
CHINESE_WORDS = ("今天", "明天", "昨天", "我们", "他们", "然后", "但是", "因为", "所以", "可以",
                 "已经", "一起", "什么", "怎么", "现在", "还是", "或者", "如果", "虽然")


def unquoted(text: str) -> str:
    """``text`` without its quotations and bracketed asides (kept as they were, rightly)."""
    return _QUOTED.sub(" | ", text)


def uncopied(answer: str, source_text: str, least: int = COPIED_RUN) -> str:
    """``answer`` less the runs of at least ``least`` characters it copied from its source (a
    command, a product name, a file): in a target of another script they rightly stay as they
    were, and say nothing of the language the answer is written in."""
    import difflib

    matcher = difflib.SequenceMatcher(None, answer, source_text, autojunk=False)
    out, at = [], 0
    for block in matcher.get_matching_blocks():
        if block.size >= least and answer[block.a:block.a + block.size].strip():
            out.append(answer[at:block.a])
            out.append(" | ")
            at = block.a + block.size
    out.append(answer[at:])
    return "".join(out)


def foreign_weight(answer: str, source: str, target: str, keep: Iterable[str] = ()) -> int:
    """The letter weight of ``answer`` left in scripts the source writes and the target does
    not, beyond names and terms; 0 when it is too little to be running text."""
    foreign = SCRIPTS.get(source, frozenset()) - SCRIPTS.get(target, frozenset())
    if not foreign:
        return 0
    text = unquoted(blank(answer, keep))
    # Scripts with capitals, word by word (a capitalised word is a name); the others, letter
    # by letter (a Han or kana run has no spaces to cut it into words).
    words = [w for w in WORD.findall(text) if script_of(w) in foreign & CASED
             and not name_like(w)]
    uncased = sum(w for s, w in letters(text).items() if s in foreign - CASED)
    spaced = sum(sum(letters(w).values()) for w in words) if len(words) >= MIN_WORDS else 0
    weight = spaced + (uncased if uncased >= MIN_WEIGHT else 0)
    return weight


@functools.lru_cache(maxsize=1)
def japanese_kanji() -> frozenset[str]:
    """The kanji Japanese writes: the Jōyō list and the Jinmeiyō list (names)."""
    from kanji_lists import JINMEIYO, JOYO

    return frozenset(JOYO.HEISEI22) | frozenset(JINMEIYO.REIWA8)


def chinese_weight(answer: str) -> int:
    """The letter weight of the Chinese clauses of a Japanese answer (0 if it has no kana: a
    whole answer in Chinese is the language check's)."""
    if KANA not in letters(answer):
        return 0
    known = japanese_kanji()
    weight = 0
    for clause in _CLAUSE.split(unquoted(answer)):
        if KANA in letters(clause):
            continue
        han = [ch for ch in clause if script_of(ch) == HAN]
        if len(han) < 3:
            continue
        if _chinese_clause(han, known):
            weight += 2 * len(han)
    return weight


def _chinese_clause(han: list[str], known: frozenset[str]) -> bool:
    """A clause of Han with no kana is Chinese when it has a character Japanese does not write,
    two Chinese function words, or one in a long clause (a Japanese clause of six kanji and no
    kana is a compound noun: 国立国会図書館, 東京都千代田区)."""
    odd = sum(ch not in known for ch in han)
    text = "".join(han)
    grammar = sum(ch in CHINESE_GRAMMAR for ch in han) + 2 * sum(
        text.count(word) for word in CHINESE_WORDS)
    return bool(odd) or (grammar >= 2 and len(han) >= 4) or (grammar >= 1 and len(han) >= 6)


def looks_chinese(answer: str) -> bool:
    """A Japanese answer with no kana at all that is Chinese: a clause of it is (谢谢你, 我今天去学校),
    not only a list or a heading of kanji words (東京、大阪、京都; 第5課：自己紹介)."""
    weights = letters(answer)
    if KANA in weights or weights.get(HAN, 0) < 4:
        return False
    known = japanese_kanji()
    return any(_chinese_clause(han, known) for han in (
        [ch for ch in clause if script_of(ch) == HAN] for clause in _CLAUSE.split(answer))
        if len(han) >= 2)


def _words(text: str) -> list[str]:
    """The words of ``text`` outside quotations, numbers, code and addresses; a name counts as
    no word (it may rightly be the same)."""
    return ["\0" if name_like(w) else w.casefold()
            for w in WORD.findall(unquoted(blank(text))) if any(ch.isalpha() for ch in w)]


def copied_words(answer: str, source_text: str) -> int:
    """How many of the answer's words (outside quotations) are in runs of at least
    :data:`RUN_WORDS` of the source's words, in the source's order."""
    said = _words(answer)
    words = [w for w in _words(source_text)]
    words = [w if w != "\0" else f"\0{i}" for i, w in enumerate(words)]  # names match nothing
    runs = {tuple(words[i:i + RUN_WORDS]) for i in range(len(words) - RUN_WORDS + 1)}
    covered = [False] * len(said)
    for i in range(len(said) - RUN_WORDS + 1):
        if tuple(said[i:i + RUN_WORDS]) in runs:
            covered[i:i + RUN_WORDS] = [True] * RUN_WORDS
    return sum(covered)


def half_translated(answer: str, source_text: str, source: str, target: str,
                    keep: Iterable[str] = ()) -> str | None:
    """The language a large part of ``answer`` was left in (None when it is translated)."""
    total = sum(letters(answer).values())
    if not total:
        return None
    if target == "ja" and chinese_weight(answer) >= HALF_SHARE * total:
        return source if source in CHINESE else "zh"
    if decides_early(source, target) or SCRIPTS.get(source, frozenset()) - SCRIPTS.get(
            target, frozenset()):
        weight = foreign_weight(answer, source, target, keep)
        return source if weight and weight >= HALF_SHARE * total else None
    if close(source, target):
        return None
    said = len(_words(answer))
    copied = copied_words(answer, source_text)
    return source if said and copied >= RUN_WORDS and copied >= COPIED_WORDS * said else None
