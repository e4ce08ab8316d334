"""``.pdf``: a PDF comes back as a PDF of the same pages, each text block translated in its box.

Reading: :mod:`~hunyuan_webui.files.pdf.guard` first refuses, on the raw bytes, what would cost a
PDF library unbounded time or memory (decompression bombs, millions of objects, encryption);
pdfminer.six then reads each page's text blocks with their boxes and font sizes
(:mod:`~hunyuan_webui.files.pdf.layout`). Each block is one paragraph sent to the translator.

Writing (:mod:`~hunyuan_webui.files.pdf.draw`): the original text operators are removed from each
page (images, drawings and table rules stay) and the translation of each block is drawn in the
block's box, the font shrunk where it is longer, in a font that holds the target's script
(:mod:`~hunyuan_webui.files.pdf.fonts`). A page made only of images (a scan) is kept as it is and
named in the result's notes (there is no OCR); a page whose text is rotated, or whose blocks do not
fit even at a small size, is laid out as flowing text in its text area and named too.

Other copies, not laid out like the source: ``output="docx"``, a Word file of the blocks in
reading order (:mod:`~hunyuan_webui.files.pdf.word`); ``bilingual="paragraphs"``, each block
followed by its translation, and ``"columns"``, side by side in a two-column table, as a Word file
or as a PDF of flowing text (:mod:`~hunyuan_webui.files.pdf.bilingual`).
"""

from __future__ import annotations

from hunyuan_webui.errors import InputError
from hunyuan_webui.files.common import Batch, Finish
from hunyuan_webui.files.pdf import fonts, guard
from hunyuan_webui.files.pdf.layout import read_pages
from hunyuan_webui.segment import is_translatable


def pdf_file(data: bytes, batch: Batch, max_bytes: int, *, output: str = "pdf",
             bilingual: str = "") -> Finish:
    """``output``: "pdf" or "docx"; ``bilingual``: "", "paragraphs" or "columns"."""
    guard.check(data, max_bytes)
    fonts.for_language(batch.target)  # say now, before translating, if a font is missing
    pages = read_pages(data)
    if all(not page.blocks for page in pages):
        scans = sum(page.scanned for page in pages)
        raise InputError(
            "This PDF has no text to translate"
            + (": its pages are scanned images, and this server does not read text from "
               "images (no OCR)." if scans else "."))
    for page in pages:
        for block in page.blocks:
            if is_translatable(block.text):
                block.unit = batch.add_text(block.text)
    scans = [page.number for page in pages if page.scanned]
    if scans:
        batch.notes.append(f"{_pages(scans)} scanned images (no OCR): kept as they are.")

    def finish(rendered: list[str]) -> bytes:
        from hunyuan_webui.files.pdf.draw import write

        texts = {b.unit: rendered[b.unit] for p in pages for b in p.blocks if b.unit is not None}
        if output != "pdf" or bilingual:
            return _copy(data, pages, texts, batch, output, bilingual)
        out, flowed = write(data, pages, texts, fonts.for_language(batch.target))
        if flowed:
            batch.notes.append(f"{_pages(flowed)} laid out as flowing text: the translation did "
                               "not fit the original layout.")
        return out

    return finish


def _copy(data: bytes, pages: list, texts: dict[int, str], batch: Batch, output: str,
          bilingual: str) -> bytes:
    """The Word file or the bilingual PDF: not laid out like the source."""
    from hunyuan_webui.files.bilingual import header as names
    from hunyuan_webui.files.pdf import outline
    from hunyuan_webui.files.pdf.bilingual import bilingual_pdf
    from hunyuan_webui.files.pdf.word import docx_of

    rows, missing = outline.items(data, pages)
    source = fonts.for_text(" ".join(b.text for p in pages for b in p.blocks), batch.lang)
    target = fonts.for_language(batch.target)
    header = names(batch.lang, batch.target)
    if missing:
        batch.notes.append(f"{missing} image{'s' if missing > 1 else ''} could not be read and "
                           f"{'were' if missing > 1 else 'was'} left out of this copy.")
    if output == "docx":
        return docx_of(rows, texts, mode=bilingual, header=header, rtl=(source.rtl, target.rtl))
    return bilingual_pdf(pages, rows, texts, (source, target), columns=bilingual == "columns",
                         header=header)


def _pages(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"Page {numbers[0]} is"
    return "Pages " + ", ".join(map(str, numbers)) + " are"
