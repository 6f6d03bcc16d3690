"""The :class:`~dpgui.data.source.DataSource` of a dataset counted by Spark (``--engine spark``).

The rows stay where Spark reads them: the histogram is one Spark SQL job
(``SELECT key, count(*) … GROUP BY key`` with the binning rule of :mod:`dpgui.data.binning` as the
key expression), and only its ≤ K + 3 rows (the K bin counts, missing, and the clamped values) come
back to this computer; the path counts of a hierarchy are one ``GROUP BY`` of the level columns. The
counts are those that :func:`dpgui.data.histogram.column_histogram` and
:func:`dpgui.data.hierarchy.count_paths` give for the same rows in a file (tests/unit/data/test_spark_source.py).

What Spark reads (:class:`~dpgui.data.source_spec.SourceSpec` of kind "spark"):

* ``location``: a Parquet or CSV file or folder, as a path Spark can read (a local path for
  ``local[N]``; ``hdfs://…``, ``s3a://…`` or a path mounted on every node for a cluster). The format
  comes from the name (``.parquet``/``.pq``; ``.csv``, ``.csv.gz``; ``.tsv``/``.tab`` with tabs) or,
  for a local folder, from the files in it; a folder Spark reads elsewhere is taken to be Parquet.
  CSV: a header row, the delimiter of ``spec.dialect`` as the officer stated it (None: the name's
  default; a local file whose head suggests another dialect is refused until one is stated, as a file
  source does, :mod:`dpgui.data.csv_dialect`), decimal point only (a decimal comma is refused), quotes
  doubled inside quoted fields (RFC 4180), types inferred by Spark (a hierarchy's level columns are
  read as their text: their labels, and any note, never depend on what the cells hold). A folder's
  hive partitions (``region=B/``) are read as the text of the folders' names, never as a type Spark
  infers from them (which would let one record's folder decide the others' labels and notes).
* ``table``: a table of the session's catalogue (e.g. a Hive metastore on a cluster); not with a
  ``location``.
* ``query``: one Spark SQL query (SELECT/WITH/VALUES/FROM…SELECT), refused before it runs unless
  Spark's own parser reads it as a query (so no DDL, INSERT, CACHE, … can run). With a ``location``
  too, that dataset is the view ``data`` of the query.

The session: one per process, started on first use with master ``spec.spark_master`` or
``local[2]`` (a spec without a master uses the session already running), the web UI off, logs at
ERROR only, and for a local master 2 × cores shuffle partitions; it is reused by every Spark source
of the process and stopped when the last one that uses it is closed (a session that someone else
started, e.g. a notebook's, is used and left running).

Progress comes from Spark's status tracker (finished tasks / tasks of the job's stages); a cancel
(``should_cancel()`` polled every 0.1 s by the calling thread) cancels the job group on the cluster.
Callbacks are called from the thread that called the method. No Qt.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import re
import shutil
import tempfile
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from dpgui.data.csv_dialect import DialectOrigin
from dpgui.data.file_types import CsvDialect
from dpgui.data.grouped_counts import BinKey, GroupedCounts, ValueKey, check_keys, check_max_groups
from dpgui.data.source import DataSource, PasswordPrompt
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import Cancelled, DataError, ParameterError
from dpgui.vocabulary import SourceKind

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

    from dpgui.data.bounding import Bounding
    from dpgui.data.grouped_counts import Key
    from dpgui.data.streams import CancelCallback, ProgressCallback
    from dpgui.data.table import ColumnInfo

__all__ = ["DEFAULT_MASTER", "SparkSource", "open_spec", "spark_session"]

#: The master when the spec names none: Spark inside this process, on 2 cores.
DEFAULT_MASTER = "local[2]"
#: The name of the dataset at ``location`` inside a ``query``.
QUERY_VIEW = "data"

_INSTALL_FIX = "pip install 'dpgui[spark]'"
#: Spark's setting that infers the type of hive partition columns from the folders' names.
_PARTITION_TYPES = "spark.sql.sources.partitionColumnTypeInference.enabled"
_JAVA_FIX = ("install Java 17 or later (Debian/Ubuntu: sudo apt install openjdk-17-jre-headless) "
             "or set JAVA_HOME to a Java installation")
_POLL_SECONDS = 0.1
_LOCAL = re.compile(r"^local(\[(\d+|\*)(,\d+)?\])?$")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# Spark's logging: errors only, and no "Setting default log level" banner (printed when the logger of
# PySpark's gateway, the "shell", is not at the root logger's level).
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
"""

T = TypeVar("T")


# --------------------------------------------------------------------------- the session


@dataclasses.dataclass
class _Session:
    spark: SparkSession
    master: str
    owned: bool  # started here (stopped when the last user releases it)
    users: int = 0
    log_dir: str | None = None


_LOCK = threading.Lock()
_CURRENT: _Session | None = None


def _pyspark() -> Any:
    """The pyspark.sql module; DataError with the install command if PySpark is missing."""
    try:
        import pyspark.sql
    except ImportError:
        raise DataError("Spark support is not installed", _INSTALL_FIX) from None
    return pyspark.sql


def _check_java() -> None:
    """DataError with the fix if no Java runtime is found (JAVA_HOME, else ``java`` on the PATH)."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = pathlib.Path(home, "bin", "java.exe" if os.name == "nt" else "java")
        if not java.is_file():
            raise DataError(f"JAVA_HOME ({home}) holds no bin/java, which Spark needs", _JAVA_FIX)
        return
    if shutil.which("java") is None:
        raise DataError("Java is not installed (Spark runs on Java)", _JAVA_FIX)


def _shuffle_partitions(master: str) -> int | None:
    """2 × the cores of a local master (Spark's default of 200 makes small local jobs slow); None
    for a cluster (its own configuration decides)."""
    m = _LOCAL.match(master)
    if m is None:
        return None
    cores = m.group(2)
    n = 1 if cores is None else (os.cpu_count() or 1) if cores == "*" else int(cores)
    return max(2, 2 * n)


def _start(master: str) -> _Session:
    sql = _pyspark()
    _check_java()
    log_dir = tempfile.mkdtemp(prefix="dpgui-spark-")
    log_file = pathlib.Path(log_dir, "log4j2.properties")
    log_file.write_text(_LOG4J2, encoding="utf-8")
    builder = (
        sql.SparkSession.builder.master(master)
        .appName("dpgui")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_file.as_uri()}")
    )
    partitions = _shuffle_partitions(master)
    if partitions is not None:
        builder = builder.config("spark.sql.shuffle.partitions", str(partitions))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # PySpark's notice about pandas versions
            spark = builder.getOrCreate()
    except Exception as err:  # noqa: BLE001 - the JVM's failures reach Python as many types
        shutil.rmtree(log_dir, ignore_errors=True)
        text = _short(err)
        if "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text:
            raise DataError("Spark could not start Java", _JAVA_FIX) from None
        raise DataError(f"Spark could not start on {master}: {text}",
                        "check the Spark master URL and that the cluster is reachable") from None
    spark.sparkContext.setLogLevel("ERROR")
    return _Session(spark, master, owned=True, log_dir=log_dir)


def _acquire(master: str | None) -> _Session:
    """The process's session (started on ``master`` or ``local[2]`` if there is none), with one more
    user; DataError if it runs on another master than the one asked for."""
    global _CURRENT
    with _LOCK:
        if _CURRENT is None:
            sql = _pyspark()
            active = sql.SparkSession.getActiveSession()
            if active is not None:  # someone else's session (a notebook's): used as it is, never stopped
                _CURRENT = _Session(active, str(active.sparkContext.master), owned=False)
            else:
                _CURRENT = _start(master or DEFAULT_MASTER)
        if master is not None and _CURRENT.master != master:
            raise DataError(
                f"Spark is already running on {_CURRENT.master} in this program, not on {master}",
                "close the other Spark data source first (or restart dpgui) to use another master")
        _CURRENT.users += 1
        return _CURRENT


def _release(session: _Session) -> None:
    """One user less; the last user stops a session started here."""
    global _CURRENT
    with _LOCK:
        session.users -= 1
        if session.users > 0 or _CURRENT is not session:
            return
        _CURRENT = None
        if session.owned:
            try:
                session.spark.stop()
            finally:
                if session.log_dir is not None:
                    shutil.rmtree(session.log_dir, ignore_errors=True)


@contextlib.contextmanager
def spark_session(master: str | None = None) -> Iterator[SparkSession]:
    """Hold the process's Spark session on ``master`` (default ``local[2]``) while the block runs:
    Spark sources opened inside it reuse it instead of starting and stopping their own (the tests
    hold one per module). DataError as :func:`open_spec`."""
    session = _acquire(master)
    try:
        yield session.spark
    finally:
        _release(session)


# --------------------------------------------------------------------------- errors and jobs


def _short(err: BaseException, limit: int = 300) -> str:
    """The first line of a Spark error (its JVM stack trace left out), cut to ``limit`` characters."""
    text = str(err).strip()
    line = next((s.strip() for s in text.splitlines() if s.strip()), type(err).__name__)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _quote(name: str) -> str:
    """A column or table name as a Spark SQL identifier (backticks; a backtick doubled)."""
    return "`" + name.replace("`", "``") + "`"


_KINDS = {
    "ByteType": "numeric", "ShortType": "numeric", "IntegerType": "numeric", "LongType": "numeric",
    "FloatType": "numeric", "DoubleType": "numeric", "DecimalType": "numeric",
    "BooleanType": "boolean", "StringType": "text", "CharType": "text", "VarcharType": "text",
    "DateType": "datetime", "TimestampType": "datetime", "TimestampNTZType": "datetime",
    "BinaryType": "binary", "NullType": "empty",
}


def _kind(data_type: object) -> str:
    """The coarse kind (:class:`~dpgui.data.table.ColumnInfo`) of a Spark SQL type."""
    return _KINDS.get(type(data_type).__name__, "other")


def _format_of(location: str) -> str:
    """'parquet' or 'csv' (or 'tsv': CSV with tabs) from the name or a local folder's files;
    DataError for anything else."""
    name = location.rstrip("/").lower()
    for suffixes, fmt in (((".parquet", ".pq"), "parquet"), ((".csv", ".csv.gz", ".csv.bz2"), "csv"),
                          ((".tsv", ".tab", ".tsv.gz", ".tab.gz"), "tsv")):
        if name.endswith(suffixes):
            return fmt
    local = _local_path(location)
    if local is not None and local.is_dir():
        names = [p.name.lower() for p in local.iterdir() if p.is_file() and not p.name.startswith(("_", "."))]
        for suffixes, fmt in (((".parquet", ".pq"), "parquet"), ((".csv", ".csv.gz"), "csv"),
                              ((".tsv", ".tab"), "tsv")):
            if names and all(n.endswith(suffixes) for n in names):
                return fmt
        if not names:
            raise DataError(f"the folder '{local}' holds no data files", "choose a folder of Parquet or CSV files")
        raise DataError(f"the folder '{local}' does not hold only Parquet or only CSV files",
                        "give Spark a folder of .parquet files (or of .csv files)")
    if local is not None and local.is_file():
        raise DataError(f"Spark reads Parquet and CSV files, not '{local.name}'",
                        "convert the data to Parquet, or use --engine local")
    return "parquet"  # a folder elsewhere (hdfs://…, s3a://…): Spark's usual dataset


def _local_path(location: str) -> pathlib.Path | None:
    """The path on this computer (a plain path or file://), None for another file system."""
    if location.startswith("file://"):
        return pathlib.Path(location[len("file://"):])
    if _URL.match(location):
        return None
    return pathlib.Path(location).expanduser()


# --------------------------------------------------------------------------- the source


class SparkSource(DataSource):
    """A dataset read and counted by Spark; only counts come back. See the module docstring."""

    def __init__(self, spec: SourceSpec) -> None:
        if spec.kind is not SourceKind.SPARK:
            raise ParameterError(f"a {spec.kind} source was given to Spark", "open it with open_source()")
        self.spec = spec
        # A CSV dataset's reader options and path (path counts read numeric level columns as text).
        self._csv: tuple[dict[str, str], str] | None = None
        self._session: _Session | None = _acquire(spec.spark_master)
        #: The master Spark runs on (``spec.spark_master``, or the running session's: ``local[2]`` by default).
        self.master = self._session.master
        try:
            self.df: DataFrame = self._load()
        except BaseException:
            self.close()
            raise

    # ---------------------------------------------------------------- opening

    @property
    def spark(self) -> SparkSession:
        if self._session is None:
            raise DataError(f"the Spark source {self.spec.display_name()} is closed", "open the data again")
        return self._session.spark

    def _load(self) -> DataFrame:
        spec = self.spec
        spark = self.spark
        if spec.table is not None and spec.location:
            raise ParameterError(f"Spark was given both a dataset ('{spec.location}') and a table ('{spec.table}')",
                                 "give either the dataset path or --table NAME")
        if spec.query is not None:
            check_read_only_query(spark, spec.query)  # before anything is read
        frame = self._read_location(spec.location) if spec.location else None
        if spec.table is not None:
            try:
                return spark.table(spec.table)
            except Exception as err:  # noqa: BLE001 - Spark's errors come as many types
                raise DataError(f"Spark cannot read the table '{spec.table}': {_short(err)}",
                                "check the table name (SHOW TABLES in Spark SQL lists them)") from None
        if spec.query is not None:
            if frame is not None:
                frame.createOrReplaceTempView(QUERY_VIEW)
            try:
                # Analysed at once: the view's plan is part of the result, so the view can go.
                return spark.sql(spec.query)
            except Exception as err:  # noqa: BLE001
                raise DataError(f"Spark cannot run the query: {_short(err)}",
                                "correct the query (test it in spark-sql first)") from None
            finally:
                if frame is not None:
                    spark.catalog.dropTempView(QUERY_VIEW)
        if frame is None:
            raise ParameterError("Spark needs a dataset path or a table", "give --source PATH or --table NAME")
        return frame

    def _read_location(self, location: str) -> DataFrame:
        local = _local_path(location)
        if local is not None and _LOCAL.match(self.master) and not local.exists():
            raise DataError(f"file not found: '{local}' does not exist", "check the path, or choose the data again")
        fmt = _format_of(location)
        dialect = self.spec.dialect
        if dialect is None and fmt != "parquet" and local is not None and local.is_file():
            # As a file source does: the name's default, unless the head suggests another dialect (then
            # refused until one is stated; a folder or a remote file: the name's default).
            from dpgui.data.csv_dialect import check_unstated_dialect, detect_dialect

            try:
                check_unstated_dialect(local.name, detect_dialect(local))
            except OSError as err:
                raise DataError(f"cannot read '{local}': {err.strerror or err}",
                                "check the file and its permissions") from None
        reader = self.spark.read
        try:
            if fmt == "parquet":
                if dialect is not None:
                    raise ParameterError("a CSV dialect was given for Parquet data", "drop --delimiter/--decimal")
                with self._partitions_as_text():
                    return reader.parquet(location)
            if dialect is not None and dialect.decimal != ".":
                raise DataError("Spark reads CSV numbers with a decimal point only, not a decimal comma",
                                "convert the file to Parquet, or use --engine local")
            delimiter = dialect.delimiter if dialect is not None else ("\t" if fmt == "tsv" else ",")
            options = {"header": "true", "inferSchema": "true", "sep": delimiter, "mode": "FAILFAST",
                       # A quote inside a quoted field is doubled (RFC 4180, as pyarrow reads it), not
                       # backslash-escaped (Spark's default, which kept '"a ""b"""' as that text).
                       "quote": '"', "escape": '"',
                       # Python's and pyarrow's spellings of the special values (Java's — NaN, Infinity,
                       # -Infinity — are read anyway).
                       "nanValue": "nan", "positiveInf": "inf", "negativeInf": "-inf",
                       "encoding": self.spec.encoding or "UTF-8"}
            with self._partitions_as_text():
                frame = reader.options(**options).csv(location)
            self._csv = (options, location)
            self.csv_dialect = CsvDialect(delimiter, ".")
            self.csv_dialect_origin = DialectOrigin.DEFAULT if self.spec.dialect is None else DialectOrigin.STATED
            return frame
        except (DataError, ParameterError):
            raise
        except Exception as err:  # noqa: BLE001
            raise DataError(f"Spark cannot read '{location}': {_short(err)}",
                            "check that the path exists where Spark runs (a cluster reads it from its own "
                            "file system) and that it holds Parquet or CSV data") from None

    @contextlib.contextmanager
    def _partitions_as_text(self) -> Iterator[None]:
        """Read a folder's hive partition columns as the text of the folders' names (the reader resolves
        them when the DataFrame is made): the session's setting is switched off for the read and put back."""
        conf = self.spark.conf
        before = conf.get(_PARTITION_TYPES, None)
        conf.set(_PARTITION_TYPES, "false")
        try:
            yield
        finally:
            if before is None:
                conf.unset(_PARTITION_TYPES)
            else:
                conf.set(_PARTITION_TYPES, before)

    # ---------------------------------------------------------------- running a job

    def _run(
        self,
        what: str,
        job: Callable[[], T],
        progress: ProgressCallback | None,
        should_cancel: CancelCallback | None,
    ) -> T:
        """Run ``job`` (Spark actions) in a worker thread under its own job group; this thread polls
        ``should_cancel`` (cancelling the group on the cluster) and reports progress. Errors become
        DataError."""
        from dpgui.data.streams import check_callbacks

        check_callbacks(progress, should_cancel)
        if should_cancel is not None and should_cancel():
            raise Cancelled()
        sc = self.spark.sparkContext
        group = f"dpgui-{uuid.uuid4().hex}"
        outcome: dict[str, Any] = {}

        def work() -> None:
            sc.setJobGroup(group, what, interruptOnCancel=True)
            try:
                outcome["value"] = job()
            except BaseException as err:  # noqa: BLE001 - handed to the calling thread
                outcome["error"] = err

        if progress is not None:
            progress(0.0)
        worker = threading.Thread(target=work, name="dpgui-spark-job", daemon=True)
        worker.start()
        done = 0.0
        cancelled = False
        while worker.is_alive():
            worker.join(_POLL_SECONDS)
            if not worker.is_alive():
                break
            if not cancelled and should_cancel is not None and should_cancel():
                sc.cancelJobGroup(group)
                cancelled = True
            if progress is not None and not cancelled:
                fraction = _job_fraction(sc, group)
                if fraction > done:
                    done = fraction
                    progress(done)
        if cancelled:
            raise Cancelled()
        if "error" in outcome:
            err = outcome["error"]
            if isinstance(err, (DataError, ParameterError)):
                raise err
            quoted = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", _short(err))  # a job's failure may quote a value of the data
            raise DataError(f"Spark failed while {what}: {quoted}",
                            "check the data and the Spark master (its logs say more)") from None
        if progress is not None:
            progress(1.0)
        value: T = outcome["value"]
        return value

    # ---------------------------------------------------------------- DataSource

    @property
    def engine(self) -> str:
        return f"Spark ({self.master})"

    def columns(self) -> tuple[ColumnInfo, ...]:
        from dpgui.data.table import ColumnInfo

        return tuple(ColumnInfo(f.name, _kind(f.dataType), f.dataType.simpleString()) for f in self.df.schema.fields)

    def preview(self, n_rows: int = 100) -> pd.DataFrame:
        if isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 0:
            raise ParameterError(f"n_rows {n_rows!r} is not a whole number >= 0", "pass a number of rows >= 0")
        head = self.df.limit(n_rows)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                if hasattr(head, "toArrow"):  # PySpark >= 4
                    frame: pd.DataFrame = head.toArrow().to_pandas()
                else:
                    frame = head.toPandas()
        except Exception as err:  # noqa: BLE001
            raise DataError(f"Spark cannot read the first rows: {_short(err)}", "check the data") from None
        return frame

    def row_count(
        self, *, progress: ProgressCallback | None = None, should_cancel: CancelCallback | None = None
    ) -> int:
        return int(self._run("counting rows", self.df.count, progress, should_cancel))

    def _column(self, column: str, kinds: tuple[str, ...], what: str) -> str:
        """The kind of ``column`` (present once, of one of ``kinds``), else DataError with the fix."""
        if not isinstance(column, str) or not column:
            raise ParameterError(f"column name {column!r} is not a non-empty string", "pick a column")
        names = self.df.schema.names
        found = [f for f in self.df.schema.fields if f.name == column]
        if not found:
            from dpgui.data.streams import column_not_found

            raise column_not_found(column, self.spec.display_name(), names)
        if len(found) > 1:
            raise DataError(f"column name '{column}' is used by {len(found)} columns of {self.spec.display_name()}",
                            "rename the columns so that each name is used once")
        kind = _kind(found[0].dataType)
        if kind not in kinds:
            raise DataError(
                f"column '{column}' of {self.spec.display_name()} is not {what} (it holds "
                f"{found[0].dataType.simpleString()} values)", f"choose a {what} column")
        return kind

    def grouped_counts(
        self,
        keys: Sequence[Key],
        *,
        max_groups: int | None = None,
        bounding: Bounding | None = None,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> GroupedCounts:
        """One job: ``SELECT keys, count(*) … GROUP BY keys`` (a :class:`BinKey` by the binning rule's key
        expression), at most ``max_groups + 1`` groups brought back. In a CSV dataset read from a path, a
        :class:`ValueKey`'s column is read as its text (as a file source reads it: 02134 stays 02134, 2.50 stays
        2.50), never as the type Spark inferred from the cells, and no note may come from those types. With
        ``bounding``: the rows it keeps (:func:`dpgui.data.bounding.bounded_frame`; a CSV's person column read as
        its text too), after one job that looks for a row without a person ID (DataError if there is one)."""
        from pyspark.sql import functions as F  # noqa: N812 - PySpark's usual name

        from dpgui.data.binning import SqlDialect, bin_key_sql

        keys = check_keys(keys)
        max_groups = check_max_groups(max_groups)
        kinds = {k.column: self._column(k.column, ("numeric", "text", "boolean", "datetime", "empty"), "categorical")
                 for k in keys if isinstance(k, ValueKey)}
        for key in keys:
            if isinstance(key, BinKey):
                self._column(key.column, ("numeric", "empty"), "numeric")
        frame = self.df
        if self._csv is not None:
            kinds = {}  # the types Spark inferred from a CSV's cells: no note may come from them
        if bounding is not None:
            frame = self._bounded(frame, keys, bounding, should_cancel)
        elif self._csv is not None and self.spec.query is None and any(isinstance(k, ValueKey) for k in keys):
            options, location = self._csv
            with self._partitions_as_text():
                frame = self.spark.read.options(**{**options, "inferSchema": "false"}).csv(location)
        columns = [F.expr(bin_key_sql(_quote(k.column), k.lower, k.upper, k.bins, SqlDialect.SPARK)).alias(f"k{i}")
                   if isinstance(k, BinKey) else F.col(_quote(k.column)).alias(f"k{i}") for i, k in enumerate(keys)]
        groups = frame.select(*columns).groupBy(*[f"k{i}" for i in range(len(keys))]).count()
        if max_groups is not None:
            groups = groups.limit(max_groups + 1)

        def job() -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                if hasattr(groups, "toArrow"):  # PySpark >= 4
                    return groups.toArrow()
                import pyarrow as pa

                return pa.Table.from_pandas(groups.toPandas(), preserve_index=False)

        names = [k.column for k in keys]
        what = (f"counting column '{names[0]}'" if len(keys) == 1 and isinstance(keys[0], BinKey)
                else "counting the paths of " + ", ".join(names))
        table = self._run(what, job, progress, should_cancel)
        counts = table.column(len(keys)).to_numpy().astype(np.int64)
        counts.flags.writeable = False
        groups_table = table.select(list(range(len(keys)))).rename_columns(names)
        return GroupedCounts(keys, groups_table, counts, int(counts.sum()), self.spec.display_name(), kinds,
                             complete=max_groups is None or table.num_rows <= max_groups)

    def _bounded(self, frame: DataFrame, keys: Sequence[Key], bounding: Bounding,
                 should_cancel: CancelCallback | None) -> DataFrame:
        """The rows of ``frame`` that ``bounding`` keeps, after the checks of the person column (one job: a row
        without an ID). A CSV read from a path is read again with its ValueKey and person columns as text."""
        from pyspark.sql import functions as F  # noqa: N812
        from pyspark.sql import types as T  # noqa: N812

        from dpgui.data.bounding import bounded_frame, check_bounding, check_person_kind

        check_bounding(bounding, keys)
        column = bounding.person_column
        if self._csv is not None and self.spec.query is None:
            options, location = self._csv
            as_text = {column} | {k.column for k in keys if isinstance(k, ValueKey)}
            schema = T.StructType([T.StructField(f.name, T.StringType() if f.name in as_text else f.dataType, True)
                                   for f in self.df.schema.fields])
            with self._partitions_as_text():
                frame = self.spark.read.schema(schema).options(**options).csv(location)
        kind = self._column(column, tuple(set(_KINDS.values()) | {"other"}), "a person ID")  # there, once
        field_type = next(f.dataType for f in frame.schema.fields if f.name == column)
        check_person_kind(column, self.spec.display_name(), kind if not isinstance(field_type, T.StringType) else "text",
                          isinstance(field_type, T.IntegralType))
        person = F.col(_quote(column))
        absent = frame.filter(person.isNull() | (person.cast("string") == "")).limit(1)
        if self._run(f"checking the person IDs of '{column}'", absent.count, None, should_cancel):
            raise DataError(f"the person-ID column '{column}' of {self.spec.display_name()} has rows without an ID",
                            "give every row its person's ID (or leave such rows out with a query)")
        return bounded_frame(frame, keys, bounding, _quote)

    def distinct_counts(
        self,
        columns: Sequence[str],
        limit: int = 100_000,
        *,
        progress: ProgressCallback | None = None,
        should_cancel: CancelCallback | None = None,
    ) -> dict[str, int]:
        """One job: ``countDistinct`` of every column (nulls not counted), each capped at ``limit``."""
        from pyspark.sql import functions as F  # noqa: N812

        from dpgui.data.hierarchy import _check_limit, _column_names

        names = _column_names(columns)
        cap = _check_limit("limit", limit)
        for name in names:
            self._column(name, ("numeric", "text", "boolean", "datetime", "empty"), "categorical")
        if not names:
            return {}
        frame = self.df.agg(*[F.countDistinct(F.col(_quote(c))) for c in names])
        row = self._run("counting the distinct values of " + ", ".join(names), lambda: frame.collect()[0],
                        progress, should_cancel)
        return {c: min(int(row[i] or 0), cap) for i, c in enumerate(names)}

    def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            _release(session)


def _job_fraction(sc: Any, group: str) -> float:
    """Finished tasks / tasks of the stages of the group's jobs so far (0 if unknown)."""
    try:
        tracker = sc.statusTracker()
        total = finished = 0
        for job_id in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job_id)
            if info is None:
                continue
            for stage_id in info.stageIds:
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    total += stage.numTasks
                    finished += stage.numCompletedTasks
        return 0.0 if total == 0 else min(1.0, finished / total)
    except Exception:  # noqa: BLE001 - progress is a courtesy; a failing tracker must not fail the count
        return 0.0


# --------------------------------------------------------------------------- queries


def check_read_only_query(spark: SparkSession, query: str) -> None:
    """ParameterError unless ``query`` is one read-only query, checked by Spark's own parser before
    anything runs (``spark.sql`` runs DDL and INSERT at once): SELECT, WITH … SELECT, VALUES,
    FROM … SELECT pass; DROP, INSERT, CACHE TABLE, several statements, … are refused."""
    if not isinstance(query, str) or not query.strip():
        raise ParameterError("the query is empty", "give one SELECT query")
    try:
        spark._jsparkSession.sessionState().sqlParser().parseQuery(query)
    except Exception as err:  # noqa: BLE001 - a ParseException from the JVM
        first = _short(err, 200)
        raise ParameterError(f"the query is not one read-only SELECT ({first})",
                             "give one SELECT query (dpgui never changes data)") from None


def open_spec(spec: SourceSpec, *, password_prompt: PasswordPrompt | None = None) -> SparkSource:
    """Open a Spark spec: start (or reuse) the session and read the schema. The prompt is unused
    (Spark's own authentication — Kerberos, cloud credentials — is configured outside dpgui)."""
    del password_prompt
    return SparkSource(spec)
