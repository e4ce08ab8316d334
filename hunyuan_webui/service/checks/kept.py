"""What a translation must keep as it is: numbers, web and e-mail addresses, inline code and
placeholders.

Every one of them in the source must be in the answer: a web address or an e-mail address
exactly (letter case aside), inline code (between backticks) and a placeholder (``{name}``,
``{{ count }}``, ``%s``, ``%1$d``, ``${var}``, ``<0>``) character for character, a number in
any form of the same value (:mod:`.numbers`). A class's homework page number must not change on
its way to a student. What is missing is the warning's ``missing``.
"""

from __future__ import annotations

import re

from hunyuan_webui.service.checks.numbers import missing_numbers
from hunyuan_webui.service.checks.same import CODE_SPAN, EMAIL, PLACEHOLDER, URL

NUMBER, ADDRESS, CODE = "number", "url", "code"  # the guards' kinds (answers.KINDS)
_TRAILING = ".,;:!?)]}>'\"»”’。，；：！？）"
_MARKS = re.compile(r"\d|@|://|www\.|`|[{}%<$]")


def addresses(text: str) -> list[str]:
    """The web and e-mail addresses of ``text``, without the punctuation that ends a sentence."""
    found = [m.group().rstrip(_TRAILING) for m in URL.finditer(text)]
    found += [m.group().rstrip(_TRAILING) for m in EMAIL.finditer(text)]
    return [a for a in found if len(a) > 4]


def code_items(text: str) -> list[str]:
    """Inline code (its content) and the placeholders outside it."""
    spans = [m.group(1) for m in CODE_SPAN.finditer(text)]
    rest = CODE_SPAN.sub(" ", text)
    return spans + [m.group() for m in PLACEHOLDER.finditer(rest)]


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def missing_item(source_text: str, answer: str, source: str,
                 target: str) -> tuple[str, str] | None:
    """The first thing of the source the answer lost, as (kind, the thing); None if it kept all.
    Addresses first, then code and placeholders, then numbers."""
    if not _MARKS.search(source_text):
        return None  # no digit, address, code or placeholder: nothing to keep
    folded = answer.casefold()
    for address in addresses(source_text):
        if address.casefold() not in folded and address.casefold().rstrip("/") not in folded:
            return ADDRESS, address
    squeezed = _squeeze(answer)
    for item in code_items(source_text):
        if item not in answer and _squeeze(item) not in squeezed:
            return CODE, item
    lost = missing_numbers(source_text, answer, target, source)
    return (NUMBER, lost[0]) if lost else None
