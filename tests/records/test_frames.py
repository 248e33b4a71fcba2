"""`to_pandas()`: the records as a typed DataFrame; and the records into another table library."""

from __future__ import annotations

import sys

import pytest

from silvia_client._records import FIELDS

from ..display._build import ACCOUNT_A, build_turn
from .test_records import account_session, pooled_turn, timed_session

pd = pytest.importorskip("pandas", reason="needs pandas: pip install 'silvia-client[pandas]'")


def test_the_frame_has_every_field_typed() -> None:
    frame = pooled_turn().to_pandas()
    assert list(frame.columns) == list(FIELDS)
    assert len(frame) == 7
    for name in ("index", "number", "offset"):
        assert str(frame[name].dtype) == "Int64", name
    assert frame["offset"].isna().tolist() == [True] * 3 + [False] * 4
    for name in ("session_id", "source", "title", "cited_text", "kind", "url", "label"):
        assert pd.api.types.is_string_dtype(frame[name]), name
    assert frame["kind"].isna().sum() == 2  # the legacy row, twice: missing, not "None"
    assert frame["summary"].dtype == bool
    assert frame["account_ids"].iloc[0] == (
        "vzeNDwK7KQIm4yEog683uElbp9GRLEFXGK98D",
        "qwp76DaG7ehEQWRnp1RjCwEBmP6bRXt1dDLK5",
    )
    empty = build_turn("No sources.").to_pandas()
    assert (list(empty.columns), len(empty)) == (list(FIELDS), 0)
    assert str(empty["number"].dtype) == "Int64"


def test_created_at_is_a_utc_datetime_and_a_bad_time_is_missing() -> None:
    session = timed_session()
    frame = session.to_pandas()
    assert isinstance(frame["created_at"].dtype, pd.DatetimeTZDtype)
    assert str(frame["created_at"].dt.tz) == "UTC"
    times = frame["created_at"].tolist()
    assert times[0] == pd.Timestamp("2025-01-01T00:00:01.5", tz="UTC")
    assert pd.isna(times[-1])
    message = session.messages[1]
    assert message.to_pandas()["message_id"].tolist() == ["m2", "m2"]


def test_without_pandas_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed
    turn = pooled_turn()
    with pytest.raises(ImportError, match=r"silvia-client\[pandas\]") as info:
        turn.to_pandas()
    assert info.value.name == "pandas"
    assert len(turn.citation_records()) == 7  # the records need nothing


def test_the_records_make_a_polars_frame_as_they_are() -> None:
    pl = pytest.importorskip("polars", reason="needs polars (pip install polars): not installed")
    records = pooled_turn().citation_records()
    frame = pl.DataFrame([{**r, "account_ids": list(r["account_ids"]),
                           "hrefs": list(r["hrefs"])} for r in records])  # fmt: skip
    assert frame.columns == list(FIELDS)
    assert frame.height == 7
    assert frame["number"].to_list() == [r["number"] for r in records]
    assert frame.filter(pl.col("kind") == "accounts")["account_ids"].to_list()[0] == list(
        records[0]["account_ids"]
    )


def test_every_table_takes_the_web_url_for_its_account_links() -> None:
    session = account_session()
    turn = pooled_turn()
    link = f"https://app.example/accounts/{ACCOUNT_A}"
    for value in (turn, session, session.messages[0]):
        frame = value.to_pandas(web_url="https://app.example")
        assert link in {href for hrefs in frame["hrefs"] for href in hrefs}
        relative = value.to_pandas()
        assert f"/accounts/{ACCOUNT_A}" in {href for hrefs in relative["hrefs"] for href in hrefs}
        records = value.citation_records(web_url="https://app.example")
        assert link in {href for r in records for href in r["hrefs"]}
