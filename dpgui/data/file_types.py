"""The table file types dpgui reads: the one list, and the words and filters derived from it.

Every place that names the supported files (the readers' format detection, the open dialogs'
filters, the messages and the command line's help) takes them from :data:`FILE_TYPES`. No imports
beyond the standard library, so that the command line can build its help without loading pyarrow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dpgui.errors import ParameterError

__all__ = [
    "CSV_DECIMALS",
    "CSV_DELIMITERS",
    "CsvDialect",
    "FILE_FILTER",
    "FILE_TYPES",
    "FILE_TYPE_NAMES",
    "SUPPORTED_EXTENSIONS",
    "TABLE_FILTER",
    "USE_A_SUPPORTED_FILE",
    "STAT_FORMATS",
    "FileType",
    "TableFormat",
    "format_of_name",
    "is_supported_file_name",
]

#: The readers' name of a format.
TableFormat = Literal["csv", "tsv", "parquet", "xlsx", "dta", "sas7bdat", "xpt", "sav"]
#: The statistical formats (Stata, SAS, SPSS), read by pyreadstat: the only files ``encoding`` applies to.
STAT_FORMATS: tuple[TableFormat, ...] = ("dta", "sas7bdat", "xpt", "sav")


@dataclass(frozen=True)
class FileType:
    """One readable format: its reader's name, how messages call it, and the file name endings
    (lower case, matched case-insensitively) that select it."""

    format: TableFormat
    name: str
    extensions: tuple[str, ...]


#: The field separators a CSV may use, with their names for messages and the window.
CSV_DELIMITERS: dict[str, str] = {",": "comma", ";": "semicolon", "\t": "tab", "|": "vertical bar"}
#: The decimal marks a CSV may use.
CSV_DECIMALS: dict[str, str] = {".": "point", ",": "comma"}


@dataclass(frozen=True)
class CsvDialect:
    """How a CSV/TSV file is written: ``delimiter`` (one of :data:`CSV_DELIMITERS`) and ``decimal``
    (one of :data:`CSV_DECIMALS`; ``","`` for "1,5" = one and a half). Quoting is always ``"``
    with doubled quotes inside. Build with :meth:`checked`."""

    delimiter: str
    decimal: str

    @classmethod
    def checked(cls, delimiter: object, decimal: object) -> CsvDialect:
        """A dialect, or ParameterError naming the bad part and the allowed values."""
        if delimiter not in CSV_DELIMITERS:
            allowed = ", ".join(repr(d) + f" ({n})" for d, n in CSV_DELIMITERS.items())
            raise ParameterError(f"field separator {delimiter!r} is not supported", f"use one of {allowed}")
        if decimal not in CSV_DECIMALS:
            raise ParameterError(f"decimal mark {decimal!r} is not supported", "use '.' or ','")
        if delimiter == decimal:
            raise ParameterError("the field separator and the decimal mark are both ','",
                                 "files with decimal commas separate fields with ';' or a tab: choose that separator")
        return cls(str(delimiter), str(decimal))

    def describe(self) -> str:
        """In words: "semicolon-separated, decimal comma"."""
        return f"{CSV_DELIMITERS[self.delimiter]}-separated, decimal {CSV_DECIMALS[self.decimal]}"


#: The readable formats, in the order the messages list them.
FILE_TYPES: tuple[FileType, ...] = (
    FileType("csv", "CSV", (".csv", ".csv.gz", ".csv.zst")),
    FileType("tsv", "TSV", (".tsv", ".tab", ".tsv.gz", ".tab.gz", ".tsv.zst", ".tab.zst")),
    FileType("parquet", "Parquet", (".parquet", ".pq")),
    FileType("xlsx", "Excel (.xlsx)", (".xlsx",)),
    FileType("dta", "Stata (.dta)", (".dta",)),
    FileType("sas7bdat", "SAS (.sas7bdat)", (".sas7bdat",)),
    FileType("xpt", "SAS transport (.xpt)", (".xpt",)),
    FileType("sav", "SPSS (.sav)", (".sav", ".zsav")),
)

#: File name endings that can be read (case-insensitive).
SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(ext for file_type in FILE_TYPES for ext in file_type.extensions)

#: The formats in words: "CSV, TSV, Parquet, Excel (.xlsx), Stata (.dta), … or SPSS (.sav)".
FILE_TYPE_NAMES = ", ".join(t.name for t in FILE_TYPES[:-1]) + " or " + FILE_TYPES[-1].name

#: The fix of a message about a file of another type.
USE_A_SUPPORTED_FILE = f"Use a {FILE_TYPE_NAMES} file."

#: A Qt file-dialog filter of the readable tables only.
TABLE_FILTER = "Tables (" + " ".join("*" + ext for ext in SUPPORTED_EXTENSIONS) + ")"

#: The open dialog's filter: the readable tables, then any file.
FILE_FILTER = TABLE_FILTER + ";;All files (*)"


def is_supported_file_name(name: str) -> bool:
    """True if the file name ``name`` ends in one of :data:`SUPPORTED_EXTENSIONS` (any case). O(1)."""
    return name.lower().endswith(SUPPORTED_EXTENSIONS)


def format_of_name(name: str) -> TableFormat | None:
    """The format selected by the file name ``name`` (any case), or None if none is. O(1)."""
    lowered = name.lower()
    return next((t.format for t in FILE_TYPES if lowered.endswith(t.extensions)), None)
