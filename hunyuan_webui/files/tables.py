"""``.csv``: a sniffed dialect; untranslated rows and fields copied byte for byte."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

from hunyuan_webui.errors import InputError
from hunyuan_webui.files import formulas
from hunyuan_webui.files.common import LINE_RE, Batch, Finish, Text, first_line
from hunyuan_webui.segment import is_translatable


@dataclass
class _Record:
    raw: str  # the record's text without its line ending
    ending: str
    row: list[str]


@dataclass
class _Table:
    dialect: type[csv.Dialect] | csv.Dialect
    records: list[_Record]
    header: list[str] | None
    header_index: int


def _sniff(text: str) -> type[csv.Dialect] | csv.Dialect:
    sample = text[:65536]
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel

    class Sniffed(sniffed):  # the sniffer says doublequote=False when it saw no quotes at all
        doublequote = True

    return Sniffed


def read_table(text: str) -> _Table:
    """Parse with the sniffed dialect and with the common ones (comma, semicolon, tab, pipe with
    double quotes); keep the consistent table with the most columns (the sniffed dialect wins
    ties, and only it may give a one-column table). The sniffer alone guesses wrong on small or
    quote-heavy files."""
    sniffed = _sniff(text)
    candidates = [sniffed] + [
        type("Common", (csv.excel,), {"delimiter": d})
        for d in ",;\t|"
        if (d, '"') != (sniffed.delimiter, sniffed.quotechar)
    ]
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    single_column = not any(d in first_line for d in ",;\t|")
    best: _Table | None = None
    first_error: InputError | None = None
    for i, dialect in enumerate(candidates):
        try:
            table = _parse_csv(text, dialect)
        except InputError as exc:
            first_error = first_error or exc
            continue
        width = len(table.header or [])
        plausible = i == 0 or width >= 2 or single_column
        if plausible and (best is None or width > len(best.header or [])):
            best = table
    if best is None:
        assert first_error is not None
        raise first_error
    return best


def _parse_csv(text: str, dialect) -> _Table:
    lines = LINE_RE.findall(text)
    reader = csv.reader(iter(lines), dialect, strict=True)
    records: list[_Record] = []
    consumed = 0
    try:
        for row in reader:
            raw = "".join(lines[consumed : reader.line_num])
            consumed = reader.line_num
            body = raw.rstrip("\r\n")
            records.append(_Record(body, raw[len(body) :], row))
    except csv.Error as exc:
        raise InputError(
            f"This .csv file is malformed near line {reader.line_num}: {first_line(exc)}"
        ) from None
    if consumed != len(lines):
        raise InputError("This .csv file is malformed: it ends inside a quoted field.")
    header_index = next((i for i, r in enumerate(records) if r.row), -1)
    header = records[header_index].row if header_index >= 0 else None
    if header is not None:
        for i, rec in enumerate(records[header_index + 1 :], start=header_index + 2):
            if rec.row and len(rec.row) != len(header):
                raise InputError(
                    f"This .csv file is malformed: record {i} has {len(rec.row)} fields, "
                    f"the header has {len(header)}."
                )
    return _Table(dialect, records, header, header_index)


def _raw_fields(raw: str, dialect) -> list[str] | None:
    """Split one record's text into its fields' source text (quotes included), or None."""
    d, q, esc = dialect.delimiter, dialect.quotechar, dialect.escapechar
    quoting = dialect.quoting != csv.QUOTE_NONE and q
    fields, i, n = [], 0, len(raw)
    while True:
        start = j = i
        if dialect.skipinitialspace:
            while j < n and raw[j] == " ":
                j += 1
        if quoting and j < n and raw[j] == q:
            j += 1
            while True:
                if j >= n:
                    return None
                c = raw[j]
                doubled = c == q and dialect.doublequote and j + 1 < n and raw[j + 1] == q
                if doubled or (esc and c == esc):
                    j += 2
                elif c == q:
                    j += 1
                    break
                else:
                    j += 1
        while j < n and raw[j] != d:
            j += 2 if esc and raw[j] == esc else 1
        fields.append(raw[start : min(j, n)])
        if j >= n:
            return fields
        i = j + 1


def _encode_field(old_raw: str, value: str, dialect) -> str:
    d, q, esc = dialect.delimiter, dialect.quotechar, dialect.escapechar
    lead = old_raw[: len(old_raw) - len(old_raw.lstrip(" "))] if dialect.skipinitialspace else ""
    was_quoted = bool(q) and old_raw[len(lead) :].startswith(q)
    special = any(c in value for c in (d, "\r", "\n")) or (bool(q) and q in value)
    if dialect.quoting == csv.QUOTE_NONE or not q:
        if special and not esc:
            raise ValueError("cannot encode")
        if esc:
            escaped = {d, esc, "\r", "\n"} | ({q} if q else set())
            value = "".join(esc + c if c in escaped else c for c in value)
        return lead + value
    if was_quoted or special or dialect.quoting == csv.QUOTE_ALL:
        if dialect.doublequote:
            value = value.replace(q, q + q)
        elif esc:
            value = value.replace(esc, esc + esc).replace(q, esc + q)
        else:
            raise ValueError("cannot encode")
        return lead + q + value + q
    return lead + value


def _code_like(value: str) -> bool:
    """IDs, codes, dates, versions: no space and a digit (A123, INV-2024-01, 2024-01-01, v1.2)."""
    v = value.strip()
    return not any(c.isspace() for c in v) and any(c.isdigit() for c in v)


def _text_columns(table: _Table) -> list[int]:
    assert table.header is not None
    chosen = []
    for j in range(len(table.header)):
        for rec in table.records[table.header_index + 1 :]:
            if rec.row and is_translatable(rec.row[j]) and not _code_like(rec.row[j]):
                chosen.append(j)
                break
    return chosen


def csv_file(src: Text, batch: Batch, columns: Sequence[str] | None) -> Finish:
    table = read_table(src.text)
    if table.header is None:
        raise InputError("This .csv file is empty.")
    if columns is None:
        chosen = _text_columns(table)
    else:
        unknown = [c for c in columns if c not in table.header]
        if unknown:
            raise InputError(
                f"Unknown column(s) {', '.join(map(repr, unknown))}. "
                f"The columns are: {', '.join(map(repr, table.header))}."
            )
        chosen = [j for j, name in enumerate(table.header) if name in set(columns)]
    plan: list[tuple[int, list[tuple[int, int]]]] = []  # record index -> [(column, unit)]
    for r, rec in enumerate(table.records[table.header_index + 1 :], start=table.header_index + 1):
        cells = [(j, batch.add_text(rec.row[j])) for j in chosen if rec.row and rec.row[j].strip()]
        if cells:
            plan.append((r, cells))

    def finish(rendered: list[str]) -> bytes:
        out = [rec.raw + rec.ending for rec in table.records]
        for r, cells in plan:
            rec = table.records[r]
            row = list(rec.row)
            for j, unit in cells:
                row[j] = formulas.translated(rec.row[j], rendered[unit])
            if row != rec.row:
                out[r] = _rewrite_record(rec, row, table.dialect) + rec.ending
        result = "".join(out)
        if not _same_rows(result, table, plan, rendered):
            result = _rewrite_all(table, plan, rendered)
        return src.encode(result)

    return finish


def _rewrite_record(rec: _Record, row: list[str], dialect) -> str:
    raws = _raw_fields(rec.raw, dialect)
    if raws is not None and len(raws) == len(rec.row):
        try:
            parts = [
                raw if new == old else _encode_field(raw, new, dialect)
                for raw, old, new in zip(raws, rec.row, row, strict=True)
            ]
            return dialect.delimiter.join(parts)
        except ValueError:
            pass
    buf = io.StringIO()
    csv.writer(buf, dialect, lineterminator="").writerow(row)
    return buf.getvalue()


def _expected_rows(table: _Table, plan, rendered: list[str]) -> list[list[str]]:
    rows = [list(rec.row) for rec in table.records]
    for r, cells in plan:
        for j, unit in cells:
            rows[r][j] = formulas.translated(table.records[r].row[j], rendered[unit])
    return rows


def _same_rows(text: str, table: _Table, plan, rendered: list[str]) -> bool:
    try:
        got = list(csv.reader(iter(LINE_RE.findall(text)), table.dialect, strict=True))
    except csv.Error:
        return False
    return got == _expected_rows(table, plan, rendered)


def _rewrite_all(table: _Table, plan, rendered: list[str]) -> str:
    """Fallback when the byte-preserving rewrite would not parse back: the csv module writes."""
    buf = io.StringIO()
    eol = next((rec.ending for rec in table.records if rec.ending), "\r\n")
    writer = csv.writer(buf, table.dialect, lineterminator=eol)
    for row in _expected_rows(table, plan, rendered):
        writer.writerow(row)
    return buf.getvalue()
