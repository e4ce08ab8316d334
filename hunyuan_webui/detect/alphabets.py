"""Rules of our own for languages that share a script: what each alphabet allows.

* For Cyrillic, what the alphabets allow is weighed into py3langid's answer: Russian has no
  і ї є ґ, Ukrainian no ы э ъ ё, Mongolian none of Kazakh's ә ғ қ ң ұ һ і, Kazakh no ї є ґ; and
  Kazakh text without any of its own letters is improbable beyond a few words
  (:func:`cyrillic_alphabets`).
* Uyghur is written in the Arabic script. Its alphabet marks every vowel with letters that
  Arabic, Persian and Urdu never use (ۆ ۇ ۈ ې ڭ ە), writes "i" as ى inside words (Arabic has ى
  only at the end of a word, Persian and Urdu use ی) and starts every vowel-initial word with ئ.
  A text where such signs make up a few percent of the letters is ``ug`` (:func:`looks_uyghur`);
  otherwise py3langid chooses among ar / fa / ur.

No detection library knows Uyghur, so this rule is ours whatever the library.
"""

from __future__ import annotations

import unicodedata

# Letters of the Uyghur Arabic alphabet that Arabic, Persian and Urdu do not use:
# ۆ (o), ۇ (u), ۈ (ü), ې (é), ڭ (ng), ە (e).
UYGHUR_LETTERS = frozenset("ۆۇۈېڭە")
ALEF_MAKSURA = "\u0649"  # ى: Uyghur "i" anywhere in a word, Arabic only at a word's end
YEH_HAMZA = "\u0626"  # ئ: Uyghur's mark of a word that starts with a vowel
UYGHUR_MIN_SHARE = 0.03

# Letters that each of our Cyrillic alphabets lacks: a text that uses them (more than in passing,
# like a quoted name: at least FOREIGN_LETTER_SHARE of its letters) is not in that language.
CYRILLIC_FOREIGN: dict[str, frozenset[str]] = {
    "ru": frozenset("іїєґәғқңөұүһ"),
    "uk": frozenset("ыэъёәғқңөұүһ"),
    "kk": frozenset("їєґ"),
    "mn": frozenset("іїєґәғқңұһ"),
}
# Kazakh's own letters (і ә қ ң ғ ұ ү ө һ) make up about a seventh of Kazakh text, so the odds
# of a Kazakh text of n letters having none of them are about (1 - 0.12) ** n, conservatively.
FOREIGN_LETTER_SHARE = 0.05
KAZAKH_LETTERS = frozenset("әғқңөұүһі")
KAZAKH_LETTER_SHARE = 0.12


def _in_word(ch: str) -> bool:
    """A letter, a combining mark (harakat, matras) or a zero-width (non-)joiner."""
    return ch.isalpha() or ch in "\u200c\u200d" or unicodedata.category(ch)[0] == "M"


def cyrillic_alphabets(text: str, ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Weigh py3langid's Cyrillic answer with what the four alphabets allow.

    A language whose alphabet lacks letters the text uses (at least 5 % of its letters) drops
    to a twentieth; Kazakh drops to ``(1 - KAZAKH_LETTER_SHARE) ** n`` when none of its own
    letters appear among n letters. Then renormalized.
    """
    lowered = text.lower()
    letters = [ch for ch in lowered if ch.isalpha()]
    present = set(letters)
    weighed = []
    for code, p in ranked:
        foreign = sum(ch in CYRILLIC_FOREIGN[code] for ch in letters)
        if foreign and foreign >= FOREIGN_LETTER_SHARE * len(letters):
            p *= 0.05
        if code == "kk" and not present & KAZAKH_LETTERS:
            p *= (1 - KAZAKH_LETTER_SHARE) ** len(letters)
        weighed.append((code, p))
    norm = sum(p for _, p in weighed) or 1.0
    return sorted(((c, p / norm) for c, p in weighed), key=lambda item: item[1], reverse=True)


def looks_uyghur(text: str) -> bool:
    """Uyghur-only letters, ى inside a word, ئ opening one: a few percent of the letters.

    ى inside words alone is not enough (some Persian text is typed with ى for every ی), so
    without a Uyghur-only letter it takes both ى inside a word and ئ opening one.
    """
    letters = own = medial = initial = 0
    padded = f" {text} "
    for i in range(1, len(padded) - 1):
        ch = padded[i]
        if not ch.isalpha():
            continue
        letters += 1
        if ch in UYGHUR_LETTERS:
            own += 1
        elif ch == ALEF_MAKSURA and _in_word(padded[i + 1]):
            medial += 1
        elif ch == YEH_HAMZA and not _in_word(padded[i - 1]):
            initial += 1
    marked = own + medial + initial
    return (own > 0 or (medial > 0 and initial > 0)) and marked >= UYGHUR_MIN_SHARE * letters
