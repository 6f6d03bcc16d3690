"""Reading the PDF reports in tests: write the bytes, read their text back with pdftotext."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def write_pdf(data: bytes, path: Path) -> Path:
    path.write_bytes(data)
    return path


def pdf_text(path: Path, page: int | None = None) -> str:
    """The PDF's text with every run of white space (line breaks too) as one space."""
    args = [tool("pdftotext"), "-enc", "UTF-8"]
    if page is not None:
        args += ["-f", str(page), "-l", str(page)]
    text = subprocess.run(args + [str(path), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(text.split())


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} (poppler-utils) is not installed: run make system-deps")
    return path
