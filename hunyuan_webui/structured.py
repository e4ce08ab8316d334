"""Structured data (JSON, XML, YAML, CSV, TSV, TOML, INI): is an answer still the same data?

Hy-MT2's structured-data prompt asks the model to translate only the user-facing text and keep
keys, tags, structure and placeholders. Nothing guarantees it does, so the service checks the answer
here before showing it: it must parse as the same format, with the same keys (object keys, XML tags
and attribute names, the CSV header and shape, INI sections and options), the same non-text values
and the same placeholders (``{{name}}``, ``${name}``, ``{0}``, ``%s``...).

When it does not, :func:`split_values` offers a fallback for the formats whose text values can be
found and put back without touching anything else (JSON string values, XML text between tags, CSV
and TSV cells below the header, except in a key or id column): each value is then translated on
its own with the plain prompt.
For the others the data is returned untranslated. Either way the user is told.
"""

from __future__ import annotations

import configparser
import csv
import html
import io
import json
import tomllib
from collections import Counter
from collections.abc import Callable
from typing import Any
from xml.etree import ElementTree
from xml.sax.saxutils import escape

import regex

from hunyuan_webui.errors import InputError

FORMATS = {"json": "JSON", "xml": "XML", "yaml": "YAML", "csv": "CSV", "tsv": "TSV",
           "toml": "TOML", "ini": "INI"}
PLACEHOLDER = regex.compile(r"\{\{\s*[\w.]+\s*\}\}|\$\{[\w.]+\}|%(?:\d+\$)?[sdif]|\{[\w.]*\}")
_FENCE = regex.compile(r"\A\s*```[\w-]*\n(?P<body>.*?)\n```\s*\Z", regex.S)
# A value worth translating has a letter; identifiers and URLs are left alone.
_LETTER = regex.compile(r"\p{L}")
_IDENTIFIER = regex.compile(r"\A(?:[a-z][\w+.-]*://\S*|[\w-]*[_./:][\w./:-]*)\Z", regex.I)
# Table columns that hold identifiers, not text, by their header.
KEY_COLUMNS = frozenset({"key", "id", "code", "slug", "identifier", "name_id"})
_JSON_STRING = regex.compile(r'"(?:[^"\\]|\\.)*"(?P<key>\s*:)?')
_XML_MARKUP = regex.compile(r"(<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<![^>]*>|<[^>]+>)", regex.S)


class StructureError(ValueError):
    """The text does not parse as the format."""


def _yaml(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise StructureError(str(exc).splitlines()[0]) from None


def _rows(text: str, delimiter: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text), delimiter=delimiter))


def _ini(text: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise StructureError(str(exc).splitlines()[0]) from None
    return parser


def _tree_shape(value: Any) -> Any:
    """Keys and non-text values of a parsed document; every string is just "text"."""
    if isinstance(value, dict):
        return ("object", tuple(sorted((str(k), _tree_shape(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("list", tuple(_tree_shape(v) for v in value))
    return "text" if isinstance(value, str) else ("value", repr(value))


def _xml_shape(element: ElementTree.Element) -> Any:
    return (element.tag, tuple(sorted(element.attrib)), tuple(_xml_shape(c) for c in element))


def _parse_json(text: str) -> Any:
    try:
        return _tree_shape(json.loads(text))
    except json.JSONDecodeError as exc:
        raise StructureError(str(exc)) from None


def _parse_xml(text: str) -> Any:
    try:
        return _xml_shape(ElementTree.fromstring(text.strip()))
    except ElementTree.ParseError as exc:
        raise StructureError(str(exc)) from None


def _parse_toml(text: str) -> Any:
    try:
        return _tree_shape(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise StructureError(str(exc)) from None


def _parse_table(delimiter: str) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        rows = [r for r in _rows(text, delimiter) if r]
        if len(rows) < 2 or len(rows[0]) < 2:  # a header and a row, two columns at least
            raise StructureError(f"not a table of {'tab' if delimiter == chr(9) else 'comma'}-"
                                 "separated columns")
        return (tuple(rows[0]), tuple(len(r) for r in rows))
    return parse


def _parse_yaml(text: str) -> Any:
    value = _yaml(text)
    if not isinstance(value, dict | list):
        raise StructureError("not a YAML mapping or list")
    return _tree_shape(value)


def _parse_ini(text: str) -> Any:
    parser = _ini(text)
    if not parser.sections():
        raise StructureError("no [section]")
    return tuple((s, tuple(parser[s])) for s in parser.sections())


SHAPES: dict[str, Callable[[str], Any]] = {
    "json": _parse_json, "xml": _parse_xml, "toml": _parse_toml, "ini": _parse_ini,
    "yaml": _parse_yaml, "tsv": _parse_table("\t"), "csv": _parse_table(","),
}
DETECT_ORDER = ("json", "xml", "toml", "ini", "yaml", "tsv", "csv")


def normalize_format(name: str) -> str:
    key = (name or "").strip().lower().lstrip(".").replace("yml", "yaml")
    if key not in FORMATS:
        raise InputError(f"Unknown data format {name!r}. Formats: {', '.join(FORMATS)}.")
    return key


def detect_format(text: str) -> str:
    """The first format ``text`` parses as (JSON, XML, TOML, INI, YAML, TSV, then CSV)."""
    for name in DETECT_ORDER:
        try:
            SHAPES[name](text)
        except StructureError:
            continue
        return name
    raise InputError("Could not tell which format this data is in; choose one "
                     f"({', '.join(FORMATS)}).")


def check_source(text: str, fmt: str) -> None:
    """The text to translate must itself be valid data of its format."""
    try:
        SHAPES[fmt](text)
    except StructureError as exc:
        raise InputError(f"The text is not valid {FORMATS[fmt]}: {exc}.") from None


def unwrap(answer: str, source: str) -> str:
    """The answer without a Markdown code fence around it, when the source had none."""
    match = _FENCE.match(answer)
    return match.group("body") if match and not _FENCE.match(source) else answer


def problem(source: str, answer: str, fmt: str) -> str | None:
    """Why ``answer`` is not ``source`` translated as the same data, or None if it is."""
    try:
        shape = SHAPES[fmt](answer)
    except StructureError as exc:
        return f"it does not parse: {exc}"
    if shape != SHAPES[fmt](source):
        return "its keys or structure changed"
    if not same_placeholders(source, answer):
        return "its placeholders changed"
    return None


def same_placeholders(source: str, answer: str) -> bool:
    return Counter(PLACEHOLDER.findall(answer)) == Counter(PLACEHOLDER.findall(source))


def translatable(value: str) -> bool:
    core = value.strip()
    return bool(_LETTER.search(core)) and not _IDENTIFIER.match(core)


# -- the fallback: text values one by one ------------------------------------------------------
Rebuild = Callable[[list[str]], str]


def split_values(text: str, fmt: str) -> tuple[list[str], Rebuild] | None:
    """The translatable text values of ``text`` and a function that puts translations of them
    back (everything else byte for byte where the format allows); None for formats without one."""
    splitter = {"json": _json_values, "xml": _xml_values, "csv": _table_values(","),
                "tsv": _table_values("\t")}.get(fmt)
    return splitter(text) if splitter else None


def _json_values(text: str) -> tuple[list[str], Rebuild]:
    spans = [(m.start(), m.end()) for m in _JSON_STRING.finditer(text)
             if not m.group("key") and translatable(json.loads(m.group(0)))]
    values = [json.loads(text[a:b]) for a, b in spans]

    def rebuild(translations: list[str]) -> str:
        out, last = [], 0
        for (a, b), new in zip(spans, translations):
            out += [text[last:a], json.dumps(new, ensure_ascii=False)]
            last = b
        return "".join([*out, text[last:]])

    return values, rebuild


def _xml_values(text: str) -> tuple[list[str], Rebuild]:
    parts = _XML_MARKUP.split(text)  # odd indexes are markup, even ones text between tags
    slots = [i for i in range(0, len(parts), 2) if translatable(html.unescape(parts[i]))]
    values = [html.unescape(parts[i]).strip() for i in slots]

    def rebuild(translations: list[str]) -> str:
        out = list(parts)
        for i, new in zip(slots, translations):
            text_ = parts[i]
            lead, trail = text_[:len(text_) - len(text_.lstrip())], text_[len(text_.rstrip()):]
            out[i] = lead + escape(new) + trail
        return "".join(out)

    return values, rebuild


def _table_values(delimiter: str) -> Callable[[str], tuple[list[str], Rebuild]]:
    def split(text: str) -> tuple[list[str], Rebuild]:
        rows = _rows(text, delimiter)
        keys = {c for c, name in enumerate(rows[0] if rows else [])
                if name.strip().casefold() in KEY_COLUMNS}
        cells = [(r, c) for r in range(1, len(rows)) for c in range(len(rows[r]))
                 if c not in keys and translatable(rows[r][c])]
        ending = "\r\n" if "\r\n" in text else "\n"

        def rebuild(translations: list[str]) -> str:
            new_rows = [list(r) for r in rows]
            for (r, c), new in zip(cells, translations):
                new_rows[r][c] = new
            out = io.StringIO()
            csv.writer(out, delimiter=delimiter, lineterminator=ending).writerows(new_rows)
            result = out.getvalue()
            return result if text.endswith(("\n", "\r")) else result[: -len(ending)]

        return [rows[r][c] for r, c in cells], rebuild
    return split
