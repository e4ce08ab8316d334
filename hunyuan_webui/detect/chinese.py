"""Which Chinese a Han text is: Cantonese (``yue``), Traditional (``zh-Hant``) or Simplified (``zh``).

Han without (much) kana is Chinese: **canto-filter** (CanCLID's Cantonese/Mandarin judge: regexes
of Cantonese-only characters and words such as 嘅 咗 唔係 佢 啲 冇 嘢 喺, with Mandarin exceptions
such as 關係) picks ``yue``; otherwise **hanzidentifier**'s CC-CEDICT character sets count
Traditional-only (們 這 說) against Simplified-only (们 这 说) characters to pick ``zh-Hant`` or
``zh``. Text made only of characters that both systems share ("你好") is ``zh`` with a lower
confidence. No detection library knows zh-Hant vs yue, so these rules are ours whatever the
library.
"""

from __future__ import annotations


class ChineseVariants:
    """The character sets and the Cantonese judge, loaded once; only read afterwards."""

    def __init__(self) -> None:
        from cantofilter import judge
        from hanzidentifier import helpers

        self._trad_only = frozenset(helpers.TRADITIONAL_CHARACTERS - helpers.SHARED_CHARACTERS)
        self._simp_only = frozenset(helpers.SIMPLIFIED_CHARACTERS - helpers.SHARED_CHARACTERS)
        self._judge_cantonese = judge

    def rank(self, text: str) -> tuple[list[tuple[str, float]], bool]:
        """Ranked yue / zh-Hant / zh, and whether any character told them apart."""
        trad = sum(ch in self._trad_only for ch in text)
        simp = sum(ch in self._simp_only for ch in text)
        distinct = trad + simp
        if distinct:
            # 1 telling character -> 0.8, 2 -> 0.9, 3 -> 0.95 ... times how one-sided they are.
            certainty = 1.0 - 0.2 * 0.5 ** (distinct - 1)
            p_trad = certainty * trad / distinct + (1 - certainty) / 2
        else:
            p_trad = 0.3  # only shared characters ("你好"): Simplified is far more common
        # "mixed" = Cantonese-only words beside Mandarin-only ones (們 這 還是): as often a false
        # Cantonese match in Mandarin ("八點會議") as real mixing, so yue comes second.
        verdict = str(self._judge_cantonese(text))
        p_yue = {"cantonese": 0.95, "mixed": 0.45}.get(verdict, 0.0)
        rest = 1.0 - p_yue
        # Written Cantonese is nearly always Traditional; Mandarin is either.
        ranked = [("yue", p_yue), ("zh-Hant", rest * p_trad), ("zh", rest * (1 - p_trad))]
        if not p_yue:
            ranked[0] = ("yue", 0.01 if trad else 0.0)
        ranked.sort(key=lambda item: item[1], reverse=True)
        return ranked, bool(distinct or p_yue)
