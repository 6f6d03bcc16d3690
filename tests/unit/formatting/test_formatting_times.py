"""The one writer of UTC moments (dpgui.formatting.iso_utc, utc_stamp): manifests, signatures, bundle names
and the ledger's records."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from dpgui.formatting import iso_utc, utc_stamp


def test_a_moment_is_written_in_utc_whatever_its_zone():
    moment = datetime(2026, 11, 21, 21, 58, 12, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert iso_utc(moment) == "2026-11-21T20:58:12Z"
    assert iso_utc(moment, microseconds=True) == "2026-11-21T20:58:12.123456Z"
    assert utc_stamp(moment) == "20261121T205812Z"
    assert datetime.fromisoformat(iso_utc(moment, microseconds=True).replace("Z", "+00:00")) == moment
