"""EPUB e-books: every chapter translated through the HTML path, the book's title and table of
contents too; chapters, headings, links, images and every other byte kept.

An EPUB is a zip package (read within bounds by :mod:`~hunyuan_webui.files.package`): a
``mimetype`` member (``application/epub+zip``), ``META-INF/container.xml`` naming the package
document (the OPF: metadata, manifest, spine), XHTML content documents (the chapters, and in EPUB 3
the navigation document), an NCX table of contents (EPUB 2), images, styles and fonts.

- Each XHTML document is parsed once as XML (well-formed, no declared entities, no scripts), then
  translated as HTML (:mod:`hunyuan_webui.files.html`): only the text between tags is replaced, so
  every tag and attribute (headings, links and their targets, images, ids, classes) comes back
  byte for byte; its ``lang``/``xml:lang`` become the target language (in a bilingual copy, each
  translated block says its own).
- The NCX's book title and navigation labels, and the OPF's ``dc:title`` and ``dc:description``
  are translated; the OPF's ``dc:language`` becomes the target language. The spine (the chapters'
  order), the manifest and every other member are copied as they are, ``mimetype`` first and
  stored, as the format requires.

Refused with words: a zip that is no EPUB, a part that declares entities (an external entity would
read the server's files), scripts (``<script>`` or ``on...`` event attributes in a chapter or an
SVG image: an e-book with code in it is not translated), and chapters encrypted by DRM.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from collections.abc import Callable
from urllib.parse import unquote

from hunyuan_webui.errors import InputError
from hunyuan_webui.files.common import Batch, Finish, Text, binary_kind, decode
from hunyuan_webui.files.html import html_file
from hunyuan_webui.files.package import Limits, Package, is_zip, parse_xml
from hunyuan_webui.segment import is_translatable

MIMETYPE = b"application/epub+zip"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_NCX = "{http://www.daisy.org/z3986/2005/ncx/}"
_ENC = "{http://www.w3.org/2001/04/xmlenc#}"
_XHTML_TYPES = ("application/xhtml+xml", "text/html")
_HTML_NAME = re.compile(r"\.x?html?$", re.IGNORECASE)
_LANG = re.compile(r"""(\s(?:xml:)?lang\s*=\s*)(["'])[^"']*\2""")
_HTML_TAG = re.compile(r"<html\b[^>]*>", re.IGNORECASE)
_DIR = re.compile(r"""(\sdir\s*=\s*)(["'])[^"']*\2""", re.IGNORECASE)


def epub_file(data: bytes, batch: Batch, max_bytes: int) -> Finish:
    from lxml import etree

    members = _open(data, max_bytes)
    blobs = {info.filename: blob for info, blob in members}
    opf_name = _package_document(blobs)
    opf = parse_xml(blobs[opf_name], ".epub", opf_name, doctype=True)
    chapters, ncx = _manifest(opf, opf_name, blobs)
    _refuse_drm(blobs, chapters)
    finishes: dict[str, Callable[[list[str]], bytes]] = {}
    for name in chapters:
        finishes[name] = _chapter(name, blobs[name], batch)
    for name, blob in blobs.items():  # scripts hide in images too
        if name not in chapters and name.lower().endswith(".svg"):
            _refuse_scripts(parse_xml(blob, ".epub", name, doctype=True), name)
    trees = {opf_name: opf}
    labels = _texts(opf, (_DC + "title", _DC + "description"), batch)
    if ncx is not None:
        trees[ncx] = parse_xml(blobs[ncx], ".epub", ncx, doctype=True)
        labels += _texts(trees[ncx], (_NCX + "text",), batch)

    def finish(rendered: list[str]) -> bytes:
        for node, unit in labels:
            node.text = rendered[unit]
        for node in opf.iter(_DC + "language"):  # a bilingual copy keeps its source's
            node.text = node.text if batch.bilingual else batch.target or node.text
        if not batch.bilingual and batch.target:
            _direct(opf, batch.target)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as package:
            for info, blob in members:
                if info.filename in finishes:
                    blob = finishes[info.filename](rendered)
                    if not batch.bilingual:  # a bilingual chapter's copies say their language
                        blob = _relabel(blob, batch.target, _rtl(batch.target))
                elif info.filename in trees:
                    blob = etree.tostring(trees[info.filename].getroottree(),
                                          xml_declaration=True, encoding="UTF-8")
                package.writestr(info, blob)
        return out.getvalue()

    return finish


def _open(data: bytes, max_bytes: int) -> list[tuple[zipfile.ZipInfo, bytes]]:
    """Every member, unpacked within the upload's limits (the whole package checked first), once
    the package is known to be an EPUB. Its XHTML may name a DOCTYPE (EPUB 2's XHTML 1.1) but
    never declare anything in it (:func:`~hunyuan_webui.files.package.parse_xml`)."""
    if not is_zip(data):
        raise InputError(f"This .epub file is {binary_kind(data) or 'not an e-book'}; expected "
                         f"an EPUB e-book.")
    with Package(data, ".epub", Limits.for_upload(max_bytes, doctype=True)) as package:
        declared = package.read("mimetype").strip() if package.info("mimetype") else b""
        if declared != MIMETYPE or package.info("META-INF/container.xml") is None:
            raise InputError("This .epub file is not an EPUB e-book (it is a zip without the "
                             "parts of one).")
        package.check()
        return list(package.members())


def _package_document(blobs: dict[str, bytes]) -> str:
    """The OPF's name, from ``META-INF/container.xml``."""
    container = parse_xml(blobs["META-INF/container.xml"], ".epub", "META-INF/container.xml")
    for rootfile in container.iter(_CONTAINER + "rootfile"):
        path = unquote(rootfile.get("full-path") or "")
        if path in blobs:
            return path
    raise InputError("This .epub file is damaged: its container names no package document "
                     "that it holds.")


def _manifest(opf, opf_name: str, blobs: dict[str, bytes]) -> tuple[list[str], str | None]:
    """The content documents (XHTML) the manifest lists, in the package's order, and the NCX."""
    base = posixpath.dirname(opf_name)
    chapters, ncx = set(), None
    for item in opf.iter(_OPF + "item"):
        href = item.get("href") or ""
        name = posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0])))
        if name not in blobs:
            continue
        kind = (item.get("media-type") or "").lower()
        if kind in _XHTML_TYPES or (not kind and _HTML_NAME.search(name)):
            chapters.add(name)
        elif kind == "application/x-dtbncx+xml":
            ncx = name
    return [name for name in blobs if name in chapters], ncx


def _refuse_drm(blobs: dict[str, bytes], chapters: list[str]) -> None:
    """Fonts may be obfuscated (harmless); chapters encrypted are DRM: nothing can be read."""
    name = "META-INF/encryption.xml"
    if name not in blobs:
        return
    root = parse_xml(blobs[name], ".epub", name, doctype=True)
    for reference in root.iter(_ENC + "CipherReference"):
        if unquote(reference.get("URI") or "") in chapters:
            raise InputError("This .epub file is protected by DRM (its chapters are "
                             "encrypted); only an e-book without DRM can be translated.")


def _chapter(name: str, blob: bytes, batch: Batch) -> Callable[[list[str]], bytes]:
    """One XHTML document, checked as XML, its text added to ``batch`` by the HTML path."""
    _refuse_scripts(parse_xml(blob, ".epub", name, doctype=True), name)
    src: Text = decode(blob, ".xhtml")
    return html_file(src, batch)


def _refuse_scripts(root, name: str) -> None:
    for node in root.iter():
        if not isinstance(node.tag, str):
            continue
        if node.tag.rsplit("}", 1)[-1].lower() == "script" or \
                any(k.rsplit("}", 1)[-1].lower().startswith("on") for k in node.attrib):
            raise InputError(f"This .epub file has scripts ({name[:80]}); e-books with code in "
                             f"them are not translated.")


def _texts(root, tags: tuple[str, ...], batch: Batch) -> list[tuple[object, int]]:
    """The elements ``tags`` of ``root`` with text to translate, each with its unit."""
    out = []
    for node in root.iter(*tags):
        text = node.text or ""
        if len(node) == 0 and is_translatable(text):
            out.append((node, batch.add_text(text)))
    return out


def _rtl(target: str | None) -> bool:
    from hunyuan_webui import languages

    return bool(target) and languages.get(target).rtl


def _direct(opf, target: str) -> None:
    """The spine's ``page-progression-direction``: ``rtl`` into a language written right to
    left (pages turn the other way), ``ltr`` out of one (a source book that said ``rtl``)."""
    for spine in opf.iter(_OPF + "spine"):
        if _rtl(target):
            spine.set("page-progression-direction", "rtl")
        elif spine.get("page-progression-direction") == "rtl":
            spine.set("page-progression-direction", "ltr")


def _relabel(blob: bytes, target: str | None, rtl: bool = False) -> bytes:
    """The chapter's ``<html lang xml:lang>`` say the target language (and ``dir`` its
    direction: ``rtl`` into Arabic, Hebrew..., ``ltr`` out of them)."""
    if not target:
        return blob
    head = blob[:4096].decode("utf-8", "ignore")
    match = _HTML_TAG.search(head)
    if match is None:
        return blob
    tag = _LANG.sub(lambda m: f"{m.group(1)}{m.group(2)}{target}{m.group(2)}", match.group(0))
    if _DIR.search(tag):
        tag = _DIR.sub(lambda m: f"{m.group(1)}{m.group(2)}{'rtl' if rtl else 'ltr'}{m.group(2)}",
                       tag)
    elif rtl:
        tag = tag[:-1].rstrip("/").rstrip() + ' dir="rtl">'
    start = len(head[:match.start()].encode("utf-8"))
    end = start + len(match.group(0).encode("utf-8"))
    return blob[:start] + tag.encode("utf-8") + blob[end:]
