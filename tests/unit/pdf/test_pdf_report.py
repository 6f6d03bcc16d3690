"""The release PDF: three pages, public values only, readable, fast at K = 10^6, works headless.

Text and images are checked with poppler (``pdftotext``, ``pdfinfo``, ``pdftoppm``), which
``make system-deps`` installs; the tests fail (not skip) without it. Page images of a K = 200 and a
K = 65,536 release are kept under ``build/pdf-pages/`` for a person to look at.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import shutil
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from dpgui.pdf import cdf_charts
from dpgui.pdf.cdf import PAGE_COUNT, render_release_pdf
from dpgui.pdf.markup import TEST_BANNER
from dpgui.pdf.page import ensure_gui_application
from dpgui.report.cdf.bundle import ReleaseInfo
from dpgui.core.mechanism import Release, release
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.planner import auto_plan
from dpgui.core.tree import TreeShape
from pdf_helpers import pdf_text, write_pdf
from pdf_helpers import tool

REPO = Path(__file__).resolve().parents[3]
PAGES_DIR = REPO / "build" / "pdf-pages"
COLUMN = "trip_minutes"
DATASET = "City taxi trips"
RELEASE_ID = "5e2f3a9c-0d41-4b7e-9a66-2c8d1f0b7e13"
KEY_ID = "7A3C91D04E5B2F68"
CREATED = datetime(2031, 7, 14, 9, 26, 53, tzinfo=timezone.utc)


def details(column: str = COLUMN) -> ReleaseInfo:
    return ReleaseInfo(DATASET, column, RELEASE_ID, CREATED, "drop")


def make_release(counts: np.ndarray, epsilon: float = 0.75, neighbours: str = "change", lower: float = 0.0,
                 upper: float = 100.0, consistency: str = "l2", secure: bool = True, seed: int = 11) -> Release:
    """A reproducible release; ``secure`` marks it as if drawn from the OS source (the noise is seeded)."""
    plan = auto_plan(counts.size, PrivacySpec(epsilon, neighbours))
    result = release(counts, plan, SeededRandom(seed), lower, upper, consistency)
    return dataclasses.replace(result, secure=secure)


def smooth_counts(k: int, n: int = 40_000, seed: int = 1) -> np.ndarray:
    values = np.random.default_rng(seed).gamma(3.0, 0.12, n)
    return np.histogram(np.clip(values, 0, 1 - 1e-12), bins=k, range=(0, 1))[0]


def pdf_pages(path: Path) -> int:
    info = subprocess.run([tool("pdfinfo"), str(path)], capture_output=True, text=True, check=True).stdout
    match = re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE)
    assert match, info
    return int(match.group(1))


def integers_in(text: str) -> set[int]:
    """Every whole number written in the text (thousands separators removed; '12.5' gives 12 and 5)."""
    return {int(token.replace(",", "")) for token in re.findall(r"\d+(?:,\d{3})*", text)}


@pytest.fixture(autouse=True)
def _application(qapp):
    """The suite's QApplication (pytest-qt), made before any render: otherwise render_release_pdf would
    create a bare QGuiApplication and later widget tests in the same process could not run."""


# ----------------------------------------------------------------------------------------------


def test_api_takes_only_public_values():
    assert list(inspect.signature(render_release_pdf).parameters) == ["release", "details", "key_id"]
    assert [f.name for f in dataclasses.fields(ReleaseInfo)] == [
        "dataset", "column", "release_id", "created_utc", "missing", "source", "whole_numbers"]
    # The source record is public: SourceSpec.public_record() holds no password and no file path.
    assert not any("count" in f.name or "hist" in f.name for f in dataclasses.fields(Release))


def test_pdf_is_three_pages_with_the_facts(tmp_path):
    rel = make_release(smooth_counts(200))
    data = render_release_pdf(rel, details(), KEY_ID)
    assert data.startswith(b"%PDF-")
    assert data.rstrip(b"\r\n").endswith(b"%%EOF")
    path = write_pdf(data, tmp_path / "release.pdf")
    assert pdf_pages(path) == PAGE_COUNT == 3
    text = pdf_text(path)
    for needed in (COLUMN, DATASET, "ε = 0.75", "δ = 0", RELEASE_ID, KEY_ID, "How to read this release",
                   "2031-07-14 09:26:53 UTC", "K = 200", "published exactly", "Least-squares",
                   "dpgui verify NAME.manifest.json --pubkey KEY.pub", "minisign -Vm NAME.manifest.json -p KEY.pub",
                   "SHA-256", "19 of every 20", f"{int(rel.total):,}", "median"):
        assert needed in text, needed
    assert "not signed" not in text
    assert TEST_BANNER not in text
    page3 = pdf_text(path, 3)
    assert "How to read this release" in page3
    assert "Released cumulative distribution" in pdf_text(path, 2)
    info = subprocess.run([tool("pdfinfo"), str(path)], capture_output=True, text=True, check=True).stdout
    assert "Differentially private release" in info


def test_signed_and_unsigned(tmp_path):
    """The key id is printed when there is one; "not signed" otherwise."""
    info = ReleaseInfo(DATASET, COLUMN, RELEASE_ID, CREATED, "error")
    rel = make_release(smooth_counts(32))
    signed = pdf_text(write_pdf(render_release_pdf(rel, info, KEY_ID), tmp_path / "signed.pdf"))
    assert KEY_ID in signed and RELEASE_ID in signed and "retired policy" in signed
    unsigned = pdf_text(write_pdf(render_release_pdf(rel, info, None), tmp_path / "unsigned.pdf"))
    assert "not signed" in unsigned


def test_unsigned_add_remove_release_says_so(tmp_path):
    rel = make_release(smooth_counts(64), epsilon=2.0, neighbours="addremove")
    path = write_pdf(render_release_pdf(rel, details(), None), tmp_path / "release.pdf")
    text = pdf_text(path)
    assert "not signed" in text
    assert "not published" in text  # N is estimated under add/remove
    assert "One person may be added or removed" in text
    assert "level 0 (the total)" in text
    assert pdf_pages(path) == 3


@pytest.mark.slow
def test_test_release_is_marked_on_every_page_and_a_secure_one_is_not(tmp_path):
    counts = smooth_counts(100)
    insecure = write_pdf(render_release_pdf(make_release(counts, secure=False), details(), KEY_ID), tmp_path / "test.pdf")
    secure = write_pdf(render_release_pdf(make_release(counts, secure=True), details(), KEY_ID), tmp_path / "real.pdf")
    for page in (1, 2, 3):
        assert TEST_BANNER in pdf_text(insecure, page), page
        assert "TEST RELEASE" not in pdf_text(secure, page), page
    assert "NOT secure" in pdf_text(insecure, 1)
    assert "secure random source" in pdf_text(secure, 1)


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_true_counts_never_appear(tmp_path, neighbours):
    """Bins with distinctive true counts (primes); every true bin count, true cumulative count and
    (under add/remove) the true N that differs from all released numbers must be absent from the text."""
    k = 64
    counts = np.random.default_rng(5).integers(1_003, 1_997, k)
    counts[9] = 7_919
    counts[41] = 104_729
    rel = make_release(counts, epsilon=1.0, neighbours=neighbours, lower=0.0, upper=6_400.0, seed=13)
    per_bin = np.diff(np.concatenate(([0], np.asarray(rel.cumulative, dtype=np.int64))))
    public = set(np.asarray(rel.cumulative, dtype=np.int64).tolist()) | set(per_bin.tolist()) | {int(rel.total)}
    true_cumulative = np.cumsum(counts)
    secrets = (set(counts.tolist()) | set(true_cumulative.tolist())) - public
    assert {7_919, 104_729} <= secrets  # the noise moved both distinctive bins
    if neighbours == "addremove":
        assert int(counts.sum()) in secrets  # N is private and its release is noisy
    path = write_pdf(render_release_pdf(rel, details(), KEY_ID), tmp_path / "release.pdf")
    written = integers_in(pdf_text(path))
    assert written, "no numbers extracted"
    leaked = sorted(secrets & written)
    assert not leaked, f"true counts in the PDF: {leaked}"


@pytest.mark.slow
def test_million_bins_render_with_thinned_curves(tmp_path, monkeypatch):
    """Every curve of a K = 10^6 release is drawn with at most 2 points per column of the plot (its
    band: 2 per column on each edge), never point by point: the rule that keeps the PDF fast and small."""
    k = 1_000_000
    shape = TreeShape.uniform(k, 16)
    privacy = PrivacySpec(1.0)
    plan = Plan(shape, privacy, equal_budgets(shape, privacy))
    counts = np.zeros(k, dtype=np.int64)
    counts[::7] = 3
    rel = dataclasses.replace(release(counts, plan, SeededRandom(2), 0.0, 1.0), secure=True)
    drawn: list[int] = []  # the points of each polyline drawn
    polygon = cdf_charts._polygon
    monkeypatch.setattr(cdf_charts, "_polygon", lambda px, py: (drawn.append(len(px)), polygon(px, py))[1])
    data = render_release_pdf(rel, details(), KEY_ID)
    assert drawn and max(drawn) <= 4 * cdf_charts.CURVE_COLUMNS + 4, drawn
    assert len(data) < 2_000_000  # the curves were thinned, not drawn point by point
    path = write_pdf(data, tmp_path / "big.pdf")
    assert pdf_pages(path) == 3
    assert "group of 5,000 bins" in pdf_text(path, 2)


def dark_fraction(png: Path) -> float:
    from PySide6.QtGui import QImage

    image = QImage(str(png)).convertToFormat(QImage.Format.Format_Grayscale8)
    assert not image.isNull(), png
    stride = image.bytesPerLine()
    raw = np.frombuffer(bytes(image.constBits()), dtype=np.uint8)[: stride * image.height()]
    pixels = raw.reshape(image.height(), stride)[:, : image.width()]
    return float((pixels < 128).mean())


def blue_fraction(png: Path) -> float:
    from PySide6.QtGui import QImage

    image = QImage(str(png)).convertToFormat(QImage.Format.Format_RGB888)
    stride = image.bytesPerLine()
    raw = np.frombuffer(bytes(image.constBits()), dtype=np.uint8)[: stride * image.height()]
    rgb = raw.reshape(image.height(), stride)[:, : image.width() * 3].reshape(image.height(), image.width(), 3)
    r, _g, b = (rgb[..., i].astype(int) for i in range(3))
    return float(((b - r > 60) & (b > 150)).mean())


@pytest.mark.slow
@pytest.mark.parametrize("k", [200, 65_536])
def test_pages_render_and_are_kept_for_looking(tmp_path, k):
    rel = make_release(smooth_counts(k, n=120_000), epsilon=1.0, lower=0.0, upper=240.0)
    path = write_pdf(render_release_pdf(rel, details(column="trip_minutes"), KEY_ID), tmp_path / f"k{k}.pdf")
    prefix = tmp_path / f"k{k}"
    subprocess.run([tool("pdftoppm"), "-r", "50", "-png", str(path), str(prefix)], check=True, capture_output=True)
    pngs = sorted(tmp_path.glob(f"k{k}-*.png"))
    assert len(pngs) == 3, pngs
    for png in pngs:
        assert dark_fraction(png) > 0.002, f"{png.name} looks blank"
    assert blue_fraction(pngs[1]) > 0.01, "page 2 has no plotted data"
    PAGES_DIR.mkdir(parents=True, exist_ok=True)
    for png in pngs:
        shutil.copy(png, PAGES_DIR / png.name)


@pytest.mark.slow
def test_unusual_releases_render(tmp_path):
    """No consistency (the curve may dip below 0), an empty table, tiny and huge bounds, a long and
    HTML-like column name: still three pages, the name shown literally."""
    name = 'weight <kg> & "net" ' + "x" * 80
    cases = [
        make_release(np.array([3, 0, 5, 1, 0, 0, 2, 9, 0, 1]), epsilon=0.1, lower=0.0, upper=0.001,
                     consistency="none"),
        make_release(np.zeros(16, dtype=np.int64), neighbours="addremove", lower=10.0, upper=26.0),
        make_release(smooth_counts(4_096), epsilon=0.5, lower=-5e9, upper=3e11, consistency="l1"),
    ]
    for i, rel in enumerate(cases):
        path = write_pdf(render_release_pdf(rel, details(column=name), KEY_ID), tmp_path / f"case{i}.pdf")
        assert pdf_pages(path) == 3
        assert 'weight <kg> & "net"' in pdf_text(path, 1)
    assert "No consistency step" in pdf_text(tmp_path / "case0.pdf", 2)


def test_ensure_gui_application_reuses_the_running_app(qapp):
    assert ensure_gui_application() is qapp


def test_renders_in_a_worker_thread(qapp, tmp_path):
    """The app renders off the GUI thread, in its QThreadPool."""
    from PySide6.QtCore import QRunnable, QThreadPool

    rel = make_release(smooth_counts(256))
    out: list[bytes] = []

    class Render(QRunnable):
        def run(self) -> None:
            out.append(render_release_pdf(rel, details(), KEY_ID))

    pool = QThreadPool()
    pool.start(Render())
    assert pool.waitForDone(60_000)
    assert out and out[0].startswith(b"%PDF-")
    assert pdf_pages(write_pdf(out[0], tmp_path / "thread.pdf")) == 3


@pytest.mark.slow
@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the offscreen fallback is for X11/Wayland systems")
def test_headless_without_any_application(tmp_path):
    """As the CLI: no QApplication, no display, no QT_QPA_PLATFORM: an offscreen QGuiApplication is made."""
    script = textwrap.dedent(f"""
        import os, sys
        import numpy as np
        from dpgui.core.mechanism import release
        from dpgui.core.noise import SeededRandom
        from dpgui.core.plan import PrivacySpec
        from dpgui.core.planner import auto_plan
        from dpgui.pdf.cdf import render_release_pdf
        from dpgui.report.cdf.bundle import ReleaseInfo
        from datetime import datetime, timezone
        from PySide6.QtGui import QGuiApplication
        assert QGuiApplication.instance() is None
        rel = release(np.arange(32), auto_plan(32, PrivacySpec(1.0)), SeededRandom(1), 0.0, 1.0)
        data = render_release_pdf(rel, ReleaseInfo("d", "c", "r", datetime.now(timezone.utc), "drop"), None)
        open({str(tmp_path / "cli.pdf")!r}, "wb").write(data)
        assert isinstance(QGuiApplication.instance(), QGuiApplication)
        print(os.environ.get("QT_QPA_PLATFORM"), QGuiApplication.platformName())
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["offscreen", "offscreen"]
    assert pdf_pages(tmp_path / "cli.pdf") == 3


@pytest.mark.slow
def test_missing_values_rule_in_the_pdf(tmp_path):
    """The PDF says which missing-value rule was applied, with the released missing count."""
    plan = auto_plan(32, PrivacySpec(1.0, "change"))
    rel = release(smooth_counts(32), plan, SeededRandom(4), 0.0, 32.0, "l2", missing=25)
    text = pdf_text(write_pdf(render_release_pdf(rel, ReleaseInfo(DATASET, COLUMN, RELEASE_ID, CREATED, "bucket"), None),
                              tmp_path / "bucket.pdf"))
    assert "Counted in a noised 'missing' bucket; N = all rows" in text
    assert "Released number of missing values" in text and "one that counts missing values" in text
    plan = auto_plan(32, PrivacySpec(1.0, "addremove"))
    rel = release(smooth_counts(32), plan, SeededRandom(4), 0.0, 32.0, "l2", missing=25)
    text = pdf_text(write_pdf(render_release_pdf(rel, ReleaseInfo(DATASET, COLUMN, RELEASE_ID, CREATED, "drop"), None),
                              tmp_path / "drop.pdf"))
    assert "Dropped (a neighbour under add/remove" in text


def test_quantile_table_says_what_the_estimate_is(tmp_path):
    """The quantile table names its value as an interpolation; the interval is for the true quantile."""
    path = write_pdf(render_release_pdf(make_release(smooth_counts(200)), details(), KEY_ID), tmp_path / "q.pdf")
    text = " ".join(pdf_text(path, 1).split())
    for needed in ("Estimate (interpolated)", "linear interpolation inside the bin",
                   "true quantile of the data lies in the interval", "where inside its bin"):
        assert needed in text, needed


# ---------------------------------------------------------------------------------------------- δ and the noise

def _release_with(privacy: PrivacySpec, noise: str) -> Release:
    counts = smooth_counts(200)
    plan = auto_plan(counts.size, privacy, noise=noise)
    assert plan.noise == noise
    return dataclasses.replace(release(counts, plan, SeededRandom(5), 0.0, 100.0, "l2"), secure=True)


@pytest.mark.slow
def test_a_gaussian_release_says_what_delta_means(tmp_path):
    from dpgui.core.accounting import zcdp_rho
    from dpgui.pdf.markup import delta_meaning

    rel = _release_with(PrivacySpec(1.0, "change", 1, 1e-9), "gaussian")
    sentence = delta_meaning(rel.plan)
    assert sentence.startswith("δ = 1e-9: beyond the factor e^ε, the probability of any published result may differ")
    assert "a chance of at most one in a billion" in sentence and "ε = 1 holds except for that tiny extra chance" in sentence
    text = pdf_text(write_pdf(render_release_pdf(rel, details(), KEY_ID), tmp_path / "gaussian.pdf"))
    assert "What ε (epsilon) and δ (delta) mean here" in text
    assert "a chance of at most one in a billion" in text and "that tiny extra chance" in text
    assert "ε = 1 and δ = 1e-9" in text and "Exact discrete Gaussian noise" in text
    rho = zcdp_rho(1.0, 1e-9)  # the plan's ρ, as the report prints it (4 significant digits)
    assert f"ρ = {rho:.4g}" in text and "Canonne, Kamath and Steinke" in text
    assert "Laplace" not in text and "δ = 0" not in text
    first_level = rel.plan.level_budgets[0]
    assert f"ρ = {first_level:.4g}" in text  # the budget per level is in ρ


@pytest.mark.slow
def test_a_laplace_release_says_pure_epsilon_and_an_unused_delta(tmp_path):
    from dpgui.pdf.markup import delta_meaning

    pure = _release_with(PrivacySpec(1.0), "laplace")
    assert delta_meaning(pure.plan).startswith("δ = 0 here: the guarantee holds always")
    text = pdf_text(write_pdf(render_release_pdf(pure, details(), KEY_ID), tmp_path / "pure.pdf"))
    assert "δ = 0 (pure ε-" in text and "not used" not in text  # (pdftotext writes "differential" with a ligature)
    assert "What ε (epsilon) means here" in text and "Exact discrete Laplace noise" in text
    unused = _release_with(PrivacySpec(1.0, "change", 1, 1e-6), "laplace")
    assert "A δ of 1e-6 was allowed in the plan but not used" in delta_meaning(unused.plan)
    text = pdf_text(write_pdf(render_release_pdf(unused, details(), KEY_ID), tmp_path / "unused.pdf"))
    assert "the δ = 1e-6 allowed in the plan was not used (Laplace noise needs none)" in text
    assert "A δ of 1e-6 was allowed in the plan but not used" in text and "Gaussian" not in text


def test_page_one_states_the_mean_and_the_sum_with_their_intervals(tmp_path):
    """Rows "Mean" and "Sum" under the quantiles: cdf_moments' estimate and the interval for the true figure of the
    values, and a sentence with the noise's margin and the binning (half of a 0.5 wide bin)."""
    from dpgui.core.cdf_moments import cdf_moments
    from dpgui.formatting import format_fixed, moment_decimals

    rel = make_release(smooth_counts(200))
    text = " ".join(pdf_text(write_pdf(render_release_pdf(rel, details(), KEY_ID), tmp_path / "m.pdf"), 1).split())
    moments = cdf_moments(rel)
    mean, total = moments.mean, moments.sum
    assert mean is not None and moments.bin_width == 0.5
    places = moment_decimals(mean.noise_margin, 0.25)
    assert (f"Mean {format_fixed(mean.value, places)} {format_fixed(mean.low, places)} to "
            f"{format_fixed(mean.high, places)}") in text
    places = moment_decimals(total.noise_margin, total.binning)
    low, high = format_fixed(total.low, places), format_fixed(total.high, places)
    assert f"Sum {format_fixed(total.value, places)} {low} to {high}" in text
    assert "binning by at most ± 0.25" in text and "± 0.25 per value" in text and "at least 95 of 100 releases" in text
