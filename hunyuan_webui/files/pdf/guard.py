"""A PDF checked within bounds before any PDF library parses it.

pdfminer.six and pypdf inflate a ``/FlateDecode`` stream whole and follow what the file says, so a
decompression bomb, a file of a million objects or an encrypted one is refused here first, on the
raw bytes: every object counted (objects inside object streams too, by their ``/N``), every Flate
stream inflated in chunks against one :class:`~hunyuan_webui.files.package.Budget` (the same
bounds as a zip package's members) and dropped at once, and an ``/Encrypt`` dictionary refused.
"""

from __future__ import annotations

import base64
import re

from hunyuan_webui.errors import InputError
from hunyuan_webui.files.package import Budget, Limits, PackageTooLargeError, inflate

MAX_OBJECTS = 200_000
MAX_PAGES = 2_000
_OBJ = re.compile(rb"(?<![0-9])[0-9]{1,10}\s+[0-9]{1,5}\s+obj\b")
_STREAM = re.compile(rb"stream\r?\n")
_OBJSTM_N = re.compile(rb"/N\s+([0-9]{1,12})")
_FILTER = re.compile(rb"/(ASCII85Decode|A85|ASCIIHexDecode|AHx|FlateDecode|Fl|[A-Za-z0-9]+Decode|DCT|RL|CCF|LZW)\b")
_SIZE = re.compile(rb"/Size\s+([0-9]{1,15})")
_DEEP = re.compile(rb"(?:\[\s*){100}|(?:<<\s*(?:/[A-Za-z0-9]+\s*)?){100}")
_IMAGE = re.compile(rb"/Subtype\s*/Image\b")
_PAGE = re.compile(rb"/Type\s*/Page(?![s\w])")


def check(data: bytes, max_bytes: int) -> None:
    """Refuse (with words) what is not a PDF, an encrypted one, one with too many objects or
    pages, and one whose streams unpack too far."""
    if not data.lstrip(b"\x00\t\n\r ").startswith(b"%PDF-") and b"%PDF-" not in data[:1024]:
        raise InputError("This .pdf file is not a PDF document (it does not start with %PDF).")
    if re.search(rb"/Encrypt\s*(\d+\s+\d+\s+R|<<)", data):
        raise InputError("This PDF is encrypted (password-protected or with permissions set). "
                         "Save an unprotected copy and upload that.")
    objects = len(_OBJ.findall(data))
    declared = max((int(n) for n in _SIZE.findall(data)), default=0)
    if declared > MAX_OBJECTS:
        raise PackageTooLargeError(f"This PDF says it holds {declared:,} objects; at most "
                                   f"{MAX_OBJECTS:,} are accepted. Is it really a document?")
    _not_deep(data)
    budget = Budget(".pdf", Limits.for_upload(max_bytes), len(data))
    pages = len(_PAGE.findall(data))
    for head, body in _streams(data):
        if _IMAGE.search(head):
            continue  # neither library unpacks an image to read or copy it
        body = _decode(head, body, budget)
        _not_deep(body)
        if b"/ObjStm" in head:
            found = _OBJSTM_N.search(head)
            objects += int(found.group(1)) if found else 0
            pages += len(_PAGE.findall(body))
        del body
        if objects > MAX_OBJECTS:
            break
    if objects > MAX_OBJECTS:
        raise PackageTooLargeError(f"This PDF holds over {MAX_OBJECTS:,} objects. Is it really "
                                   "a document?")
    if pages > MAX_PAGES:
        raise PackageTooLargeError(f"This PDF has {pages:,} pages; at most {MAX_PAGES:,} are "
                                   "accepted.")


def _not_deep(data: bytes) -> None:
    if _DEEP.search(data):
        raise InputError("This PDF is damaged: its objects nest too deeply (100 levels or more).")


def _decode(head: bytes, body: bytes, budget: Budget) -> bytes:
    """A stream's bytes through its ASCII85/ASCIIHex and Flate filters (what a bomb hides in),
    each inflation counted against ``budget``; other filters (images' DCT, JBIG2...) left."""
    filters = _FILTER.findall(head.split(b"/DecodeParms")[0])
    for name in filters:
        name = name.decode("latin-1")
        if name in ("ASCII85Decode", "A85"):
            try:
                body = base64.a85decode(body.strip().removesuffix(b"~>") + b"~>", adobe=True)
            except ValueError:
                raise InputError("This PDF is damaged (a stream's ASCII85 data).") from None
        elif name in ("ASCIIHexDecode", "AHx"):
            body = bytes.fromhex(re.sub(rb"[^0-9A-Fa-f]", b"", body.split(b">")[0]).decode()
                                 .ljust(2, "0"))
        elif name in ("FlateDecode", "Fl"):
            body = inflate(body, budget, "a stream")
        else:
            break
    return body


def _streams(data: bytes):
    """Each stream of the file: (its dictionary, a bounded look back; its raw bytes)."""
    pos = 0
    while True:
        found = _STREAM.search(data, pos)
        if found is None:
            return
        start = found.end()
        end = data.find(b"endstream", start)
        if end < 0:
            return
        if found.start() >= 3 and data[found.start() - 3:found.start()] == b"end":
            pos = found.end()
            continue
        head = data[max(0, found.start() - 2048):found.start()]
        head = head[head.rfind(b"obj") + 3:] if b"obj" in head else head
        yield head, data[start:end].rstrip(b"\r\n")
        pos = end + 9
