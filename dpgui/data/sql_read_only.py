"""The check that a query given for a database only reads, before anything runs.

:func:`check_read_only_query` reads the query as PostgreSQL's lexer would (comments, string literals —
'…', E'…', $tag$…$tag$ —, quoted names) and refuses anything but one ``SELECT``/``WITH``/``VALUES``/``TABLE``
statement without a word or a function that changes data, schema, session or server state. It is the
first of the two guards of :mod:`dpgui.data.sql_source`, which runs every statement in a read-only
transaction too (the backstop for what a word list cannot see). Stdlib only; no I/O.
"""

from __future__ import annotations

import re

from dpgui.errors import DataError

__all__ = ["check_read_only_query"]

# Words that change data, schema, session or server state; refused anywhere outside string literals
# and quoted identifiers (a column named "update" must be written quoted).
# (Statements that cannot hide inside a SELECT — COMMIT, CHECKPOINT, … — are refused by the first-word rule.)
_WRITING_WORDS = frozenset([
    "insert", "update", "delete", "merge", "create", "drop", "alter", "truncate", "grant", "revoke",
    "copy", "call", "do", "set", "reset", "lock", "vacuum", "analyze", "reindex", "cluster", "listen",
    "notify", "unlisten", "prepare", "execute", "deallocate", "discard", "attach", "detach", "pragma",
    "into",
])
# Functions that change state even inside a SELECT (most also fail in a read-only transaction).
_WRITING_FUNCTIONS = frozenset([
    "set_config", "nextval", "setval", "lo_import", "lo_export", "lo_unlink", "lo_create", "lo_creat",
    "lo_from_bytea", "lo_put", "dblink", "dblink_exec", "pg_terminate_backend", "pg_cancel_backend",
    "pg_reload_conf", "pg_promote", "pg_switch_wal", "pg_rotate_logfile", "pg_file_write",
    "pg_advisory_lock", "pg_advisory_xact_lock", "pg_notify", "txid_current", "pg_current_xact_id",
    # these run SQL given as text, which the check cannot see (e.g. a dblink call inside it)
    "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "ts_stat",
])
# Families of such functions: dblink_* opens a second connection, outside the read-only transaction
# (dblink_connect + dblink_send_query ran a DELETE); advisory locks outlive the query; replication
# slots, statistics resets, WAL replay and adminpack's file functions change the server.
_WRITING_FUNCTION_PREFIXES = (
    "dblink", "pg_advisory", "pg_try_advisory", "pg_background", "pg_create_", "pg_drop_", "pg_replication_origin",
    "pg_stat_reset", "pg_wal_replay", "pg_logical_emit", "pg_file_",
)
# PostgreSQL's lexer (scan.l): an identifier starts with a letter, '_' or any non-ASCII character and
# continues with those, digits and '$'; only ASCII space, tab, newline, CR and form feed separate words.
# (A non-ASCII space or sign is part of a name, so "a€$x$" is one name, not "a€" and a $-quoted string.)
_IDENTIFIER = re.compile(r"[A-Za-z_\u0080-\U0010FFFF][A-Za-z0-9_$\u0080-\U0010FFFF]*")
_SPACE = frozenset(" \t\n\r\f\v")

def _words(sql: str) -> tuple[list[str], list[int], list[int]]:
    """The bare words and punctuation of ``sql`` (lower case) outside comments, string literals
    ('…', E'…', $tag$…$tag$) and quoted identifiers ("…", `…`); the positions of ';' among them
    and in ``sql``.
    Raises DataError for an unterminated literal or comment."""
    out: list[str] = []
    semicolons: list[int] = []
    semicolon_at: list[int] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in _SPACE:
            i += 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif sql.startswith("/*", i):
            depth, i = 1, i + 2
            while depth and i < n:
                if sql.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif sql.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            if depth:
                raise DataError("the query has an unterminated /* comment", "close the comment with */")
        elif c == "'" or (c in "eE" and sql.startswith("'", i + 1)):
            backslash = c != "'"
            i += 1 if c == "'" else 2
            while True:
                if i >= n:
                    raise DataError("the query has an unterminated string literal", "close the string with '")
                if backslash and sql[i] == "\\":
                    i += 2
                elif sql[i] == "'":
                    if sql.startswith("''", i):
                        i += 2
                    else:
                        i += 1
                        break
                else:
                    i += 1
            out.append("'")
        elif c in "\"`":
            close = c
            j = i + 1
            while True:
                j = sql.find(close, j)
                if j < 0:
                    raise DataError("the query has an unterminated quoted name", f"close it with {close}")
                if sql.startswith(close * 2, j):
                    j += 2
                    continue
                break
            # '"' + the name (doubled quotes undone), so that a quoted FUNCTION name is checked too;
            # a U&"…" name may spell anything with escapes: '"?' (refused before a '(').
            name = sql[i + 1:j].replace(close * 2, close)
            unicode_escaped = len(out) >= 2 and out[-1] == "&" and out[-2] == "u"
            out.append('"?' if unicode_escaped else '"' + name)
            i = j + 1
        elif c == "$" and (m := re.match(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$", sql[i:])):
            tag = m.group(0)
            j = sql.find(tag, i + len(tag))
            if j < 0:
                raise DataError("the query has an unterminated $-quoted string", f"close it with {tag}")
            out.append("'")
            i = j + len(tag)
        elif c.isalpha() or c == "_" or ord(c) >= 0x80:
            m2 = _IDENTIFIER.match(sql, i)
            assert m2 is not None
            out.append(m2.group(0).lower())
            i += len(m2.group(0))
        else:
            if c == ";":
                semicolons.append(len(out))
                semicolon_at.append(i)
            out.append(c)
            i += 1
    return out, semicolons, semicolon_at


def check_read_only_query(query: str) -> str:
    """``query`` if it is one read-only ``SELECT`` (or ``WITH … SELECT``, or a parenthesised one),
    without a trailing ';'; else DataError naming what was found, before anything runs.

    Refused: more than one statement, a first word other than SELECT/WITH/VALUES/TABLE, any word that
    changes data, schema or session (INSERT, UPDATE, DELETE, MERGE, CREATE, DROP, ALTER, TRUNCATE,
    GRANT, COPY, CALL, DO, SET, LOCK, VACUUM, … and INTO, so no ``SELECT … INTO``) or a state-changing
    function (``set_config``, ``nextval``, ``lo_import``, …) outside string literals and quoted names.
    The read-only transaction every query runs in is the backstop for what a word list cannot see
    (a user-defined function that writes). O(length of the query).
    """
    if not isinstance(query, str) or not query.strip():
        raise DataError("the query is empty", "give one SELECT statement")
    words, semicolons, semicolon_at = _words(query)
    fix = "give one SELECT … (or WITH … SELECT …) statement that only reads: dpgui never changes the database"
    if semicolons and (len(semicolons) > 1 or semicolons[0] != len(words) - 1):
        raise DataError("the query holds more than one statement (a ';' inside it)", fix)
    if semicolons:
        words = words[:-1]
        query = query[: semicolon_at[0]]  # the final ';' (a comment after it goes too)
    first = next((w for w in words if w != "("), "")
    if first not in ("select", "with", "values", "table"):
        raise DataError(f"the query starts with {first.upper() or 'nothing'}, not SELECT or WITH", fix)
    for k, w in enumerate(words):
        if w in _WRITING_WORDS:
            raise DataError(f"the query contains {w.upper()}, which can change the database",
                            f"{fix} (a column or table named {w} must be written in double quotes: \"{w}\")")
        if k + 1 < len(words) and words[k + 1] == "(":
            name = w[1:] if w.startswith('"') else w  # a quoted name is the function of that exact name
            if name == "?":
                raise DataError("the query calls a function named with U&\"…\" escapes, which dpgui cannot check",
                                fix)
            if name in _WRITING_FUNCTIONS or name.startswith(_WRITING_FUNCTION_PREFIXES):
                raise DataError(f"the query calls {name}(), which can change the database or the session", fix)
    return query.strip()
