"""Zip packages read within bounds: every container format's one door (.docx, .pptx, .xlsx; the
OpenDocument and EPUB files are zip packages too).

A package is a few hundred kilobytes that may unpack to gigabytes: deflate packs repeated XML
about 1000 to 1, and a library that opens it whole (python-docx reads every part, lxml builds a
tree of a hundred bytes or more per element) turns 278 KB into 4 GB of memory. So nothing here
trusts what the package says of itself, and nothing is unpacked beyond :class:`Limits`:

- before the zip is opened, its central directory's entries are counted (a byte search in the
  directory's span, not ``zipfile``'s parse of them all, which costs half a second and 50 MB for
  100,000 empty members);
- every member's name must stay inside the package (no ``/x``, ``..``, ``\\``), appear once, use
  stored or deflated data (``bzip2`` and ``lzma`` inflate a whole block at a time, unbounded), and
  not be encrypted;
- members are unpacked in chunks (:meth:`Package.read`, :meth:`Package.check`), and what came
  out is counted as it comes: a member past its size or its compression ratio, and the package
  past its total or its overall ratio, are refused at that chunk, whatever the headers claimed
  (``zipfile`` stops a member at its declared size and fails its CRC, so a header that claims
  less than the data only makes the member "damaged");
- the XML members' markup is counted too (each ``<``: a tag, an upper bound on the elements of the
  tree a parser would build), and a ``<!DOCTYPE`` is refused where the format never has one (Office
  and OpenDocument files; an EPUB's XHTML may name one without declaring anything);
- :func:`parse_xml` parses with no DTD, no entities, no network and libxml2's default bounds
  (256 levels deep, no "huge" trees), and refuses a document that declares entities;
- a container that is no zip (a PDF's ``/FlateDecode`` streams) counts what it unpacks against
  the same :class:`Budget` with :func:`inflate`.

:func:`give_memory_back` hands the heap's free pages back to the system once a file's job ends.

Errors are :class:`~hunyuan_webui.errors.InputError` (400) with words, or
:class:`~hunyuan_webui.errors.InputTooLongError` (413) for a package that unpacks too far.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from hunyuan_webui.errors import InputError, InputTooLongError

CHUNK = 1 << 20  # bytes unpacked at a time
MB = 1_000_000
_ZIP_LOCAL = b"PK\x03\x04"
_ZIP_CENTRAL = b"PK\x01\x02"
_ZIP_END = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_DOCTYPES = tuple("<!DOCTYPE".encode(codec) for codec in ("utf-8", "utf-16-le", "utf-16-be"))
_XML_NAME = re.compile(r"\.(xml|rels|xhtml|html?|opf|ncx|svg)$", re.IGNORECASE)


@dataclass(frozen=True)
class Limits:
    """How far a package may unpack. :meth:`for_upload` scales them with the upload limit."""

    members: int = 5000  # entries in the zip (a 300-slide deck with its media has ~2,000)
    member_bytes: int = 25 * MB  # one member, unpacked
    total_bytes: int = 50 * MB  # all members, unpacked
    ratio: float = 100.0  # unpacked / packed, for a member and for the whole file...
    ratio_floor: int = 2 * MB  # ...once more than this has come out of it (small parts may pack well)
    markup: int = 1_000_000  # tags in all XML members: ~120 bytes of parsed tree per element
    doctype: bool = False  # whether an XML member may name a DOCTYPE (never declare entities)

    @classmethod
    def for_upload(cls, max_bytes: int, **overrides: object) -> Limits:
        """Ten times the upload limit unpacked in all (5 times for one member), never less than
        8 MB, so that a small limit still takes a real document."""
        total = max(10 * max(max_bytes, 0), 8 * MB)
        values: dict[str, object] = {"total_bytes": total, "member_bytes": max(total // 2, 4 * MB)}
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]


class PackageTooLargeError(InputTooLongError):
    code = "package_too_large"


def _mb(n: float) -> str:
    return f"{n / MB:.0f} MB" if n >= 10 * MB else f"{n / MB:.1f} MB"


class Budget:
    """What a container (``what``: ".docx", ".pdf") of ``packed`` bytes has unpacked so far,
    against ``limits``: a zip package's members (:class:`Package`) or a PDF's streams
    (:func:`inflate`) count against one budget, chunk by chunk."""

    def __init__(self, what: str, limits: Limits, packed: int) -> None:
        self.what, self.limits, self.packed = what, limits, packed
        self.unpacked = 0  # bytes unpacked so far, all parts together
        self.markup = 0  # tags seen so far in the XML parts

    def take(self, name: str, size: int, done: int, packed: int) -> None:
        """``size`` more bytes came out of part ``name`` (``done`` of it so far, from ``packed``
        bytes): refused past a part's size or ratio, or the whole's."""
        limits = self.limits
        self.unpacked += size
        if done > limits.member_bytes:
            raise self.too_large(f"{name[:80]!r} unpacks to more than "
                                 f"{_mb(limits.member_bytes)}")
        if done > limits.ratio_floor and done > limits.ratio * max(packed, 1):
            raise self.too_large(f"{name[:80]!r} is packed more than {limits.ratio:g} to 1")
        if self.unpacked > limits.total_bytes:
            raise self.too_large(f"it unpacks to more than {_mb(limits.total_bytes)}")
        if self.unpacked > limits.ratio_floor and \
                self.unpacked > limits.ratio * max(self.packed, 1):
            raise self.too_large(f"it is packed more than {limits.ratio:g} to 1")

    def take_markup(self, name: str, chunk: bytes) -> None:
        """Count the tags of an XML part's chunk (an upper bound on its parsed elements)."""
        self.markup += chunk.count(b"<")
        if self.markup > self.limits.markup:
            raise PackageTooLargeError(
                f"This {self.what} file has too much markup (over {self.limits.markup:,} tags "
                f"by {name[:80]!r}). Is it really a document?")

    def too_large(self, detail: str) -> PackageTooLargeError:
        return PackageTooLargeError(
            f"This {self.what} file unpacks to too much data ({detail}; the limits are "
            f"{_mb(self.limits.member_bytes)} for one part, {_mb(self.limits.total_bytes)} in "
            f"all, packed at most {self.limits.ratio:g} to 1). Is it really a document?")


def inflate(data: bytes, budget: Budget, name: str, wbits: int = zlib.MAX_WBITS) -> bytes:
    """A zlib (deflate) stream, such as a PDF's ``/FlateDecode`` stream ``name``, unpacked in
    chunks against ``budget``: refused at the chunk that passes it, never inflated whole."""
    out, done = [], 0
    stream = zlib.decompressobj(wbits)
    pending = data
    try:
        while pending and not stream.eof:
            chunk = stream.decompress(pending, CHUNK)
            pending = stream.unconsumed_tail
            done += len(chunk)
            budget.take(name, len(chunk), done, len(data))
            out.append(chunk)
    except zlib.error as exc:
        raise InputError(f"This {budget.what} file is damaged ({name[:80]}): {exc}") from None
    return b"".join(out)


class Package:
    """A zip package opened within ``limits``; ``what`` names it in messages (``.docx``)."""

    def __init__(self, data: bytes, what: str, limits: Limits,
                 is_xml: Callable[[str], bool] | None = None) -> None:
        self.data, self.what, self.limits = data, what, limits
        self.is_xml = is_xml or (lambda name: bool(_XML_NAME.search(name)))
        self.budget = Budget(what, limits, len(data))
        count = central_entries(data)
        if count > limits.members:
            raise PackageTooLargeError(
                f"This {what} file holds {count:,} files; at most {limits.members:,} are "
                f"accepted.")
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            self.infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError,
                struct.error, UnicodeDecodeError) as exc:
            raise InputError(f"This {what} file is damaged: {_first_line(exc)}") from None
        self._check_directory()

    def _check_directory(self) -> None:
        """Names, methods, encryption and the sizes the directory declares (a member that
        claims too much is refused now; one that claims too little is counted as it unpacks)."""
        what, limits, seen = self.what, self.limits, set()
        if len(self.infos) > limits.members:
            raise PackageTooLargeError(f"This {what} file holds {len(self.infos):,} files; at "
                                       f"most {limits.members:,} are accepted.")
        declared = 0
        for info in self.infos:
            name = info.filename
            if not safe_name(name):
                raise InputError(f"This {what} file is damaged: a part is named outside the "
                                 f"package ({name[:80]!r}).")
            if name in seen:
                raise InputError(f"This {what} file is damaged: two parts are named "
                                 f"{name[:80]!r}.")
            seen.add(name)
            if info.flag_bits & 0x1:
                raise InputError(f"This {what} file is encrypted (password-protected); remove "
                                 f"the password and upload it again.")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise InputError(f"This {what} file is damaged: {name[:80]!r} is packed in a way "
                                 f"office files never are.")
            if info.file_size > limits.member_bytes:
                raise self.budget.too_large(f"{name[:80]!r} unpacks to {_mb(info.file_size)}")
            declared += info.file_size
        if declared > limits.total_bytes:
            raise self.budget.too_large(f"it unpacks to {_mb(declared)}")

    # -- reading -------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return [info.filename for info in self.infos]

    def info(self, name: str) -> zipfile.ZipInfo | None:
        try:
            return self._zip.getinfo(name)
        except KeyError:
            return None

    def read(self, member: zipfile.ZipInfo | str) -> bytes:
        """One member's bytes, unpacked within the limits (counted against the package's)."""
        return b"".join(self._chunks(member))

    def check(self) -> None:
        """Unpack every member once, keeping nothing: the whole package within its limits
        (before a library that reads it all by itself opens it)."""
        for info in self.infos:
            for _ in self._chunks(info):
                pass

    def members(self) -> Iterator[tuple[zipfile.ZipInfo, bytes]]:
        for info in self.infos:
            yield info, self.read(info)

    def _chunks(self, member: zipfile.ZipInfo | str) -> Iterator[bytes]:
        info = member if isinstance(member, zipfile.ZipInfo) else self._zip.getinfo(member)
        xml = self.is_xml(info.filename)
        done, tail = 0, b""
        try:
            with self._zip.open(info) as stream:
                while chunk := stream.read(CHUNK):
                    done += len(chunk)
                    self.budget.take(info.filename, len(chunk), done, info.compress_size)
                    if xml:
                        tail = self._scan_xml(info.filename, tail, chunk)
                    yield chunk
        except (zipfile.BadZipFile, zlib.error, OSError, ValueError, EOFError, RuntimeError,
                NotImplementedError, struct.error) as exc:
            raise InputError(f"This {self.what} file is damaged: {_first_line(exc)}") from None

    def _scan_xml(self, name: str, tail: bytes, chunk: bytes) -> bytes:
        """Count the markup of an XML member's chunk and look for a DOCTYPE (across the chunk
        boundary too); returns the tail to carry over."""
        self.budget.take_markup(name, chunk)
        if not self.limits.doctype:
            window = tail + chunk
            if any(marker in window for marker in _DOCTYPES):
                raise InputError(f"This {self.what} file is refused: its part {name[:80]!r} "
                                 f"declares a DOCTYPE, which {self.what} files never do "
                                 f"(it can define entities).")
            return window[-(len(_DOCTYPES[1]) - 1):]
        return b""

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> Package:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def safe_name(name: str) -> bool:
    """A member name that stays inside the package: relative, forward slashes, no ``..``."""
    if not name or "\\" in name or "\x00" in name or name.startswith("/") or \
            re.match(r"^[A-Za-z]:", name):
        return False
    return ".." not in name.split("/")


def central_entries(data: bytes) -> int:
    """How many entries a zip's central directory holds, counted as bytes in its span (an upper
    bound: a name could hold the signature), without parsing them. 0 if no end record is found
    (then it is no zip, and ``zipfile`` says so)."""
    end = data.rfind(_ZIP_END, max(0, len(data) - 22 - 65535))
    if end < 0 or end + 22 > len(data):
        return 0
    size = struct.unpack_from("<I", data, end + 12)[0]
    location = end
    if end >= 20 and data[end - 20:end - 16] == _ZIP64_LOCATOR and end >= 76:
        location = end - 20 - 56  # zipfile reads the zip64 record just before its locator
        if data[location:location + 4] == b"PK\x06\x06":
            size = struct.unpack_from("<Q", data, location + 40)[0]
    start = location - size
    if start < 0:  # a directory that claims more than the file: count everything before
        start = 0
    return data.count(_ZIP_CENTRAL, start, location)


def is_zip(data: bytes) -> bool:
    return data.startswith(_ZIP_LOCAL)


# -- XML -----------------------------------------------------------------------------------------
def xml_parser(**options: object):  # -> lxml.etree.XMLParser
    """lxml's parser with no DTD, no entities, no network, libxml2's default bounds."""
    from lxml import etree

    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           dtd_validation=False, huge_tree=False, **options)


def parse_xml(data: bytes, what: str, name: str, *, doctype: bool = False, **options: object):
    """The root of an XML member (``name`` of a ``what`` file), parsed by :func:`xml_parser`; a
    damaged member, a DOCTYPE (unless ``doctype``: then one that declares nothing) and a tree
    deeper than libxml2's 256 levels are refused with words."""
    from lxml import etree

    try:
        root = etree.fromstring(data, parser=xml_parser(**options))
    except etree.XMLSyntaxError as exc:
        raise InputError(f"This {what} file is damaged ({name[:80]}): {_first_line(exc)}") \
            from None
    info = root.getroottree().docinfo
    if info.doctype and (not doctype or _declares(info)):
        raise InputError(f"This {what} file is refused: its part {name[:80]!r} declares a "
                         f"DOCTYPE.")
    return root


def _declares(info) -> bool:
    """Whether a document's DOCTYPE declares anything (entities, elements): an internal subset."""
    dtd = info.internalDTD
    return dtd is not None and (any(True for _ in dtd.iterentities()) or
                                any(True for _ in dtd.iterelements()))


def _first_line(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return msg[0][:300] if msg else type(exc).__name__


# -- memory ----------------------------------------------------------------------------------------
def give_memory_back() -> None:
    """Hand the heap's free pages back to the system (glibc's ``malloc_trim``): a document's
    parsed trees are freed when its job ends, but glibc keeps the pages in its arenas, and the
    process's resident memory stays where the largest document took it. Elsewhere (musl, macOS,
    Windows) nothing is done."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


_TRIM: list = []


def _malloc_trim():  # -> the C function, or None
    if not _TRIM:
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6")
            function = libc.malloc_trim
            function.argtypes, function.restype = [ctypes.c_size_t], ctypes.c_int
            _TRIM.append(function)
        except (OSError, AttributeError):
            _TRIM.append(None)
    return _TRIM[0]
