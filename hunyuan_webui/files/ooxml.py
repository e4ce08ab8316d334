"""What the Office packages (.docx, .pptx, .xlsx) share: opening one within bounds.

:func:`open_office` says what a file that is no zip really is (an old ``.doc``, an image), then
opens it as a :class:`~hunyuan_webui.files.package.Package` within the upload's limits, knowing
which of its members are XML: those named so, and those ``[Content_Types].xml`` declares XML
(python-docx parses a part by its declared type, whatever its name).
"""

from __future__ import annotations

from hunyuan_webui.errors import InputError
from hunyuan_webui.files.common import binary_kind
from hunyuan_webui.files.package import Limits, Package, is_zip, parse_xml

CONTENT_TYPES = "[Content_Types].xml"
_CT = "{http://schemas.openxmlformats.org/package/2006/content-types}"


def open_office(data: bytes, ext: str, name: str, article: str, max_bytes: int,
                needs: str) -> Package:
    """``data`` as an Office package (``ext`` ".docx", ``name`` "Word", ``article`` "a") that
    has the part ``needs``, opened within :meth:`Limits.for_upload`; nothing is unpacked yet but
    its content types."""
    if not is_zip(data):
        found = binary_kind(data)
        if found and "old Office" in found:
            raise InputError(f"This is an old {name} file. Save it as {ext} and upload it again.")
        raise InputError(f"This {ext} file is {found or f'not {article} {name} file'}; "
                         f"expected {article} {name} ({ext}) file.")
    package = Package(data, ext, Limits.for_upload(max_bytes))
    if package.info(needs) is None:
        package.close()
        raise InputError(f"This {ext} file is not {article} {name} file (it is a zip without "
                         f"the parts of one).")
    declared = _xml_parts(package)
    named = package.is_xml
    package.is_xml = lambda member: named(member) or member in declared[0] or \
        member.rsplit(".", 1)[-1].lower() in declared[1]
    return package


def _xml_parts(package: Package) -> tuple[set[str], set[str]]:
    """The parts ``[Content_Types].xml`` declares XML: by name, and by extension."""
    if package.info(CONTENT_TYPES) is None:
        return set(), set()
    root = parse_xml(package.read(CONTENT_TYPES), package.what, CONTENT_TYPES)
    names = {o.get("PartName", "").lstrip("/") for o in root.iter(_CT + "Override")
             if _is_xml_type(o.get("ContentType", ""))}
    extensions = {d.get("Extension", "").lower() for d in root.iter(_CT + "Default")
                  if _is_xml_type(d.get("ContentType", ""))}
    return names, extensions


def _is_xml_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media.endswith(("+xml", "/xml"))
