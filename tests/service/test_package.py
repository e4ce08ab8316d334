"""Zip packages unpack within bounds (issue 32, finding 1: a 278 KB .docx that unpacked to 95 MB
of XML took the web process to 3.9 GB).

Each of :class:`~hunyuan_webui.files.package.Package`'s limits on its own, with limits small
enough to show which one refused; then every bomb of :mod:`bombs` and every other lie (100,000
empty members, ``../../x``, a zip in a zip, billion laughs, 100,000 levels of nesting) through
``translate_file`` as an upload of each Office kind: each refused with words, fast, and without
the memory the bomb asks for (Python's own allocations traced while it is refused).
"""

from __future__ import annotations

import io
import time
import tracemalloc
import zipfile

import bombs
import pytest

from hunyuan_webui.errors import InputError, InputTooLongError
from hunyuan_webui.files import read_file, translate_file
from hunyuan_webui.files.package import (
    Budget,
    Limits,
    Package,
    PackageTooLargeError,
    central_entries,
    inflate,
    parse_xml,
    safe_name,
)

MB = 1_000_000


def identity(segments: list[str]) -> list[str]:
    return list(segments)


def package(*members: tuple[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return out.getvalue()


def check(data: bytes, **limits) -> Package:
    with Package(data, ".docx", Limits(**limits)) as opened:
        opened.check()
        return opened


# -- each limit ------------------------------------------------------------------------------------
def test_a_member_packed_too_tightly_is_refused_as_it_unpacks():
    """Its size is within the limits the directory is checked against: only the bytes that come
    out tell (3 MB from 3 KB)."""
    data = package(("word/document.xml", b"<a/>" * 750_000))
    with pytest.raises(PackageTooLargeError, match="packed more than 100 to 1"):
        check(data)
    check(data, ratio=2000)  # the same member, with room for it


def test_the_whole_package_packed_too_tightly_is_refused():
    """Forty members, each too small to be judged alone: together they are."""
    data = package(*((f"part{i}.bin", b"\0" * 1_000_000) for i in range(40)))
    with pytest.raises(PackageTooLargeError, match="it is packed more than 100 to 1"):
        check(data)


def test_sizes_the_directory_declares_are_refused_before_anything_unpacks():
    data = package(("big.bin", b"\0" * 6 * MB))
    with pytest.raises(PackageTooLargeError, match="'big.bin' unpacks to"):
        check(data, member_bytes=5 * MB, ratio=10_000)
    data = package(*((f"p{i}.bin", b"\0" * MB) for i in range(6)))
    with pytest.raises(PackageTooLargeError, match="it unpacks to 6.0 MB"):
        check(data, total_bytes=5 * MB, ratio=10_000)


def test_a_directory_that_claims_less_than_the_data_gets_no_more_than_it_claims():
    """zipfile stops a member at its declared size, so the lie only breaks its checksum."""
    data = bombs.lying_sizes(".docx", size=20 * MB, claimed=1000)
    with pytest.raises(InputError, match="damaged: Bad CRC-32"):
        check(data)


def test_markup_is_counted_across_the_xml_members():
    data = package(("a.xml", b"<a/>" * 600), ("b.xml", b"<b/>" * 600), ("c.bin", b"<" * 5000))
    with pytest.raises(PackageTooLargeError, match="over 1,000 tags by 'b.xml'"):
        check(data, markup=1000)
    check(data, markup=1200)  # the binary member's bytes are not markup


def test_members_beyond_the_count_are_refused_before_zipfile_reads_them():
    data = package(*((f"m{i}", b"") for i in range(300)), method=zipfile.ZIP_STORED)
    assert central_entries(data) == 300
    with pytest.raises(PackageTooLargeError, match="holds 300 files; at most 200"):
        Package(data, ".docx", Limits(members=200))


@pytest.mark.parametrize("name", ["../../x", "/etc/passwd", "a/../../b", "C:/x", "a\\b"])
def test_a_member_named_outside_the_package_is_refused(name):
    assert not safe_name(name)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        info = zipfile.ZipInfo("placeholder")
        info.filename = name  # as a hostile tool writes it: zipfile would have cleaned it
        zf.writestr(info, b"escaped")
    with pytest.raises(InputError, match="named outside the package"):
        check(out.getvalue())


def test_two_members_of_one_name_and_foreign_methods_are_refused():
    with pytest.raises(InputError, match="two parts are named"), pytest.warns(UserWarning):
        check(package(("a.xml", b"<a/>"), ("a.xml", b"<b/>")))
    with pytest.raises(InputError, match="packed in a way office files never are"):
        check(package(("a.xml", b"<a/>"), method=zipfile.ZIP_BZIP2))


def test_an_encrypted_member_is_refused_with_what_to_do():
    data = bytearray(package(("a.xml", b"<a/>")))
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        data[flags_at + at] |= 0x1
    with pytest.raises(InputError, match="encrypted .* remove the password"):
        check(bytes(data))


@pytest.mark.parametrize("codec", ["utf-8", "utf-16-le", "utf-16-be"])
def test_a_doctype_is_refused_in_any_encoding_and_across_chunks(codec, monkeypatch):
    import hunyuan_webui.files.package as module

    monkeypatch.setattr(module, "CHUNK", 64)  # the marker falls across two chunks
    text = "<?xml version='1.0'?>" + " " * 50 + "<!DOCTYPE a [<!ENTITY e 'x'>]><a>&e;</a>"
    with pytest.raises(InputError, match="declares a DOCTYPE"):
        check(package(("word/document.xml", text.encode(codec))))
    check(package(("word/media/x.bin", text.encode(codec))))  # not XML: not its business


def test_a_deflate_stream_outside_a_zip_counts_against_the_same_budget():
    """A PDF's streams are no zip: each is inflated in chunks against the document's budget."""
    import zlib

    page = zlib.compress(b"BT (Hello) Tj ET\n" * 1000)
    budget = Budget(".pdf", Limits(total_bytes=8 * MB), packed=MB)  # a 1 MB PDF
    assert inflate(page, budget, "page 1") == b"BT (Hello) Tj ET\n" * 1000
    bomb = zlib.compress(b"\0" * 50 * MB)
    started = time.monotonic()
    with pytest.raises(PackageTooLargeError, match="'page 2' is packed more than 100 to 1"):
        inflate(bomb, budget, "page 2")
    assert time.monotonic() - started < 1
    with pytest.raises(PackageTooLargeError, match="more than 8.0 MB"):
        for i in range(10):  # streams of 1 MB each, ordinary alone, too many together
            inflate(zlib.compress(bytes(range(256)) * 4000), budget, f"image {i}")
    with pytest.raises(InputError, match="damaged"):
        inflate(b"not deflate", budget, "page 3")


# -- the XML parser --------------------------------------------------------------------------------
def test_the_parser_takes_no_entities_no_dtd_and_no_depth():
    for hostile in (bombs.BILLION_LAUGHS + b"<lolz>&lol9;</lolz>",
                    b'<!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]><a>&e;</a>',
                    b"<a>" * 100_000 + b"</a>" * 100_000):
        started = time.monotonic()
        with pytest.raises(InputError, match="DOCTYPE|damaged"):
            parse_xml(hostile, ".epub", "chapter.xhtml", doctype=True)
        assert time.monotonic() - started < 1
    # An EPUB's XHTML may name a DOCTYPE that declares nothing; an Office part may not.
    bare = b"<!DOCTYPE html><html><body>Hi</body></html>"
    assert parse_xml(bare, ".epub", "a.xhtml", doctype=True).tag == "html"
    with pytest.raises(InputError, match="DOCTYPE"):
        parse_xml(bare, ".docx", "word/document.xml")


# -- every bomb, as an upload of each kind (slow: each is tens of megabytes of deflate to make) ----
@pytest.mark.slow
@pytest.mark.parametrize("ext", bombs.KINDS)
@pytest.mark.parametrize("bomb", list(bombs.BOMBS))
def test_every_bomb_is_refused_fast_and_small(ext, bomb):
    data = bombs.BOMBS[bomb](ext)
    assert len(data) < 300_000
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(InputError) as refused:
            translate_file("lesson" + ext, data, identity)
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(refused.value, InputTooLongError) or "damaged" in str(refused.value)
    assert ext in str(refused.value)
    assert elapsed < 2, elapsed
    assert peak < 20 * MB, peak  # the bomb asks for 60 MB and more


@pytest.mark.slow
@pytest.mark.parametrize("ext", bombs.KINDS)
@pytest.mark.parametrize("lie", list(bombs.LIES))
def test_every_other_lie_is_refused_with_words(ext, lie):
    data = bombs.LIES[lie](ext)
    started = time.monotonic()
    with pytest.raises(InputError) as refused:
        read_file("lesson" + ext, data, max_bytes=10 * MB)  # room for 100,000 empty members
    assert time.monotonic() - started < 2
    message = str(refused.value)
    expected = {"100,000 empty members": "holds 100,000 files",
                "a member named ../../x": "named outside the package",
                "a zip in a zip": "zip without the parts of one",
                "billion laughs": "declares a DOCTYPE",
                "nested 100,000 deep": "Excessive depth"}[lie]
    assert expected in message, message


def test_a_real_document_of_each_kind_still_reads():
    for ext in bombs.KINDS:
        assert read_file("lesson" + ext, bombs.base(ext)).segments() == ["谢谢你的帮助。"]
