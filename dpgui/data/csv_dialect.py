"""How a CSV/TSV file is written: its field separator and decimal mark, detected from its head.

:func:`detect_dialect` reads at most :data:`DIALECT_HEAD_BYTES` of text (decompressed for
``.gz``/``.zst``) and returns a :class:`DetectedDialect`: the :class:`~dpgui.data.file_types.CsvDialect`
to read the file with, whether it was detected or assumed, and why, in words for the window
("detected: semicolon-separated, decimal comma").

The rule (no guessing beyond it):

* **Separator.** Each line of the head is split (outside ``"`` quotes, doubled quotes inside) by
  each of ``,`` ``;`` tab ``|``. A separator is *consistent* if it splits the header into at least
  two fields and every line into as many as the header. One consistent separator: detected. None,
  or several (e.g. both ``,`` and ``;`` give 3 fields on every line): the file name's default
  (``,`` for ``.csv``, tab for ``.tsv``/``.tab``), *assumed*. A head where no separator splits any
  line is a one-column file: the default separator, unless its values use a decimal comma and the
  default is ``,`` (then ``;``).
* **Decimal mark.** With a separator other than ``,``: a comma if at least one unquoted field is
  a number written with a decimal comma (``-1,5``, ``1,5e-3``; a thousands-grouped ``1.234,5``
  counts too) and no field is a number with a decimal point (``1.5``; ``1.234`` alone is ambiguous
  and is not counted either way); else a point. With ``,`` as separator: always a point.

Thousands separators are not supported by the reader (pyarrow): with a decimal comma, ``1.234,5`` is
not a number, so its column is text and a histogram of it is refused with the row named
(:func:`dpgui.data.readers.numeric_column_batches`).

Detection only suggests. The dialect a release reads a confidential file with, and the one its
manifest, PDF and ledger record, is the officer's statement (:attr:`DialectOrigin.STATED`: the
command line's ``--delimiter``/``--decimal``, or the dialect confirmed or chosen in the window) or the
file name's default (:attr:`DialectOrigin.DEFAULT`), never a reading of the confidential cells: one
salary written with cents would otherwise change how every value is parsed, and the record of it.
:class:`UnstatedDialect` is the refusal when the suggestion and the default differ and nothing was
stated (raised when the file is opened as a data source, before anything is counted or spent; it
reaches only the officer).

Stdlib + pyarrow (for the decompressed head of ``.gz``/``.zst``); no Qt. O(head) time and memory.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import pathlib
import re
from dataclasses import dataclass
from enum import Enum

from dpgui.data.file_types import CSV_DELIMITERS, CsvDialect
from dpgui.errors import DataError

__all__ = [
    "DIALECT_HEAD_BYTES",
    "DetectedDialect",
    "DialectOrigin",
    "compression_of",
    "default_dialect",
    "detect_dialect",
    "detect_dialect_text",
    "read_head",
    "UnstatedDialect",
    "check_unstated_dialect",
    "stated_dialect_options",
]

#: Bytes of (decompressed) text read to detect the dialect.
DIALECT_HEAD_BYTES = 1 << 18
# Lines of the head looked at (the header included).
_MAX_LINES = 2000

_DECIMAL_COMMA_NUMBER = re.compile(r"^[+-]?(\d{1,3}(\.\d{3})+|\d*),\d+([eE][+-]?\d+)?$")
_DECIMAL_POINT_NUMBER = re.compile(r"^[+-]?(\d*\.\d+|\d+\.)([eE][+-]?\d+)?$")
# "1.234", "12.500.000": a decimal point, or '.' grouping thousands (1234, 12500000)? ("0.125" is a decimal.)
_GROUPED_THOUSANDS = re.compile(r"^[+-]?[1-9]\d{0,2}(\.\d{3})+$")

_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"),
         (b"\xfe\xff", "utf-16"), (b"\xef\xbb\xbf", "utf-8-sig"))


@dataclass(frozen=True)
class DetectedDialect:
    """The dialect to read a CSV/TSV with: ``dialect``; ``detected``: True if the head decided it,
    False if it is the file name's default (assumed); ``reason``: why, in words."""

    dialect: CsvDialect
    detected: bool
    reason: str

    def describe(self) -> str:
        """For the window: "detected: semicolon-separated, decimal comma" or "assumed: …"."""
        return f"{'detected' if self.detected else 'assumed'}: {self.dialect.describe()}"


class DialectOrigin(Enum):
    """Where the dialect a file is read with comes from; recorded with it (manifest, PDF, ledger).
    Never the file's cells: detection only suggests (:class:`UnstatedDialect`)."""

    STATED = "stated"  # said by the officer: --delimiter/--decimal, or confirmed or chosen in the window
    DEFAULT = "default"  # the file name's default (:func:`default_dialect`)


def stated_dialect_options(dialect: CsvDialect) -> str:
    """The command-line options that state ``dialect``: "--delimiter semicolon --decimal ','"."""
    word = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}[dialect.delimiter]
    return f"--delimiter {word} --decimal '{dialect.decimal}'"


class UnstatedDialect(DataError):
    """The refusal to read a confidential CSV file with its name's default dialect when its first lines
    suggest another (``suggestion``) and the officer stated none. The message names both dialects and
    how to state one (command line and window); it quotes no cell. Reaches only the officer: raised
    before anything is read for a release or spent."""

    def __init__(self, name: str, suggestion: DetectedDialect) -> None:
        default = default_dialect(name)
        super().__init__(
            f"'{name}' looks {suggestion.dialect.describe()} (suggested by its first lines), not "
            f"{default.describe()} (the default for its name), and no dialect was stated: dpgui reads "
            "confidential data only as you state it, or with the default",
            f"state how it is written: in the window, Confirm (or Change…) beside the separator in step 1; on "
            f"the command line, {stated_dialect_options(suggestion.dialect)}")
        self.suggestion = suggestion


def check_unstated_dialect(name: str, suggestion: DetectedDialect) -> None:
    """Raise :class:`UnstatedDialect` if ``suggestion`` (what the first lines of the file ``name``
    suggest) differs from the name's default; the file may then be read with the default only if the
    officer states so."""
    if suggestion.dialect != default_dialect(name):
        raise UnstatedDialect(name, suggestion)


def compression_of(name: str) -> str | None:
    """'gzip' for a name ending in .gz, 'zstd' for .zst, else None (any case)."""
    lowered = name.lower()
    if lowered.endswith(".gz"):
        return "gzip"
    if lowered.endswith(".zst"):
        return "zstd"
    return None


def default_dialect(name: str) -> CsvDialect:
    """The dialect a file name implies: tab for .tsv/.tab (compressed too), comma otherwise; decimal point."""
    stem = name.lower()
    for ext in (".gz", ".zst"):
        stem = stem.removesuffix(ext)
    return CsvDialect("\t" if stem.endswith((".tsv", ".tab")) else ",", ".")


def read_head(path: str | os.PathLike[str], n_bytes: int = DIALECT_HEAD_BYTES) -> tuple[bytes, bool]:
    """The first ``n_bytes`` of the file's text (decompressed for .gz/.zst) and whether that is all of
    it. OSError (or pyarrow's error for a corrupt stream) propagates: the reader reports it."""
    p = pathlib.Path(os.fspath(path))
    compression = compression_of(p.name)
    if compression is None:
        with open(p, "rb") as handle:
            data = handle.read(n_bytes + 1)
    else:
        import pyarrow as pa

        with pa.OSFile(os.fspath(p)) as raw, pa.CompressedInputStream(raw, compression) as stream:
            data = stream.read(n_bytes + 1)
    return data[:n_bytes], len(data) <= n_bytes


def _decode(data: bytes, complete: bool) -> str:
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), "utf-8")
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    return decoder.decode(data, final=complete)


def _records(text: str, delimiter: str) -> list[list[str]]:
    """The non-blank records of ``text`` split by ``delimiter`` (quotes as the reader treats them)."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter, quotechar='"', doublequote=True, strict=False)
    out = []
    try:
        for row in reader:
            if len(row) > 1 or any(field.strip() for field in row):
                out.append(row)
            if len(out) >= _MAX_LINES:
                break
    except csv.Error:
        pass  # e.g. a NUL byte: judge on the records so far
    return out


def _complete_lines(text: str, complete: bool) -> str:
    """``text`` without its last, partial line (unless it is the whole file)."""
    if complete:
        return text
    cut = text.rfind("\n")
    return text[: cut + 1] if cut >= 0 else text


def _decimal_counts(records: list[list[str]]) -> tuple[int, int]:
    """(fields that are numbers with a decimal comma, fields that are numbers with a decimal point)
    among the data records (the header excluded)."""
    comma, point, _ = _number_counts(records)
    return comma, point


def _number_counts(records: list[list[str]]) -> tuple[int, int, str | None]:
    """:func:`_decimal_counts` and the first field that is ambiguous ("1.234": a decimal point, or a
    thousands separator), None if there is none."""
    comma = point = 0
    ambiguous: str | None = None
    for row in records[1:]:
        for field in row:
            s = field.strip()
            if _DECIMAL_COMMA_NUMBER.match(s):
                comma += 1
            elif _GROUPED_THOUSANDS.match(s):
                ambiguous = ambiguous or s
            elif _DECIMAL_POINT_NUMBER.match(s):
                point += 1
    return comma, point, ambiguous


def detect_dialect_text(text: str, name: str = "file.csv") -> DetectedDialect:
    """The dialect of CSV text (complete lines), with the default of the file name ``name``. O(len(text))."""
    default = default_dialect(name)
    dname = CSV_DELIMITERS[default.delimiter]
    parsed = {d: _records(text, d) for d in CSV_DELIMITERS}
    if not any(parsed.values()):
        return DetectedDialect(default, False, f"the file has no lines to judge by: assumed {dname}-separated "
                                               "(the default for its name)")
    consistent = [d for d, rows in parsed.items()
                  if rows and len(rows[0]) >= 2 and all(len(r) == len(rows[0]) for r in rows)]
    n_lines = max(len(rows) for rows in parsed.values())
    lines = "the header" if n_lines == 1 else f"{'the first ' if n_lines >= _MAX_LINES else ''}{n_lines:,} lines"
    if len(consistent) == 1:
        delimiter = consistent[0]
        width = len(parsed[delimiter][0])
        fields = f"{width} {CSV_DELIMITERS[delimiter]}-separated fields"
        reason = f"the header has {fields}" if n_lines == 1 else f"every one of {lines} has {fields}"
        detected = True
    elif consistent:
        names = " and ".join(CSV_DELIMITERS[d] for d in consistent)
        delimiter = default.delimiter
        reason = (f"ambiguous: {names} each split all {lines} into equal numbers of fields; "
                  f"assumed {dname} (the default for its name)")
        detected = False
    elif all(len(rows[0]) == 1 for rows in parsed.values() if rows):
        # No separator in the header: one column, if no other separator splits a line either
        # (a comma may: it is then the decimal mark, "1,5").
        if all(len(r) == 1 for d in CSV_DELIMITERS if d != "," for r in parsed[d]):
            comma, point = _decimal_counts(parsed[";"])
            if comma and not point:
                delimiter = ";" if default.delimiter == "," else default.delimiter
                return DetectedDialect(CsvDialect(delimiter, ","), True,
                                       f"one column; {comma:,} numbers use a decimal comma and none a decimal point")
            return DetectedDialect(default, True, "one column (no separator in the header)")
        delimiter = default.delimiter
        reason = f"the header has no separator but later lines have; assumed {dname} (the default for its name)"
        detected = False
    else:
        delimiter = default.delimiter
        reason = (f"no separator splits every line into as many fields as the header; assumed {dname} "
                  "(the default for its name)")
        detected = False
    if delimiter == ",":
        return DetectedDialect(CsvDialect(",", "."), detected, reason)
    comma, point, ambiguous = _number_counts(parsed[delimiter])
    if comma and not point:
        return DetectedDialect(CsvDialect(delimiter, ","), detected,
                               f"{reason}; {comma:,} numbers use a decimal comma and none a decimal point")
    if ambiguous is not None and not comma and not point:
        # Nothing tells: reading '1.234' as 1.234 when it means 1234 would count it 1000 times too small.
        return DetectedDialect(CsvDialect(delimiter, "."), False,
                               f"{reason}; numbers such as '{ambiguous}' may use '.' as a decimal point or to group "
                               "thousands (1234): assumed decimal point — check, and choose the decimal mark if not")
    if comma and point:
        reason += (f"; numbers with a decimal comma ({comma:,}) and with a decimal point ({point:,}): "
                   "assumed decimal point")
        return DetectedDialect(CsvDialect(delimiter, "."), False, reason)
    return DetectedDialect(CsvDialect(delimiter, "."), detected, reason)


def detect_dialect(path: str | os.PathLike[str], n_bytes: int = DIALECT_HEAD_BYTES) -> DetectedDialect:
    """The dialect of a CSV/TSV file (``.gz``/``.zst`` decompressed) from its first ``n_bytes`` of text.
    OSError if it cannot be read. O(n_bytes)."""
    p = pathlib.Path(os.fspath(path))
    data, complete = read_head(p, n_bytes)
    return detect_dialect_text(_complete_lines(_decode(data, complete), complete), p.name)
