"""`silvia record`, and `silvia serve --replay`'s refusals, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from silvia_client.citations import AccountsTarget
from silvia_client.cli._args import UsageError
from silvia_client.cli._server import choose_server, shown_url
from silvia_client.testing import IN_PROCESS_URL, Recording, ReferenceServer, record_turn

from ._cli import TOKEN, reference_turn, run, with_markers


def _replayed_target(recording: Recording) -> object:
    with recording.client() as client, client.chat.stream("again") as stream:
        return stream.until_done().citations[0].target


def test_record_streams_the_answer_to_stderr_and_writes_a_replayable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "turn.jsonl"
    argv = ["record", "Where do I stand?", "--scenario", "accounts", "-o", str(path)]
    status, out, err = run(argv, capsys)
    assert (status, out) == (0, "")  # stdout stays empty: the answer is shown, not piped
    assert "using the embedded reference server" in err
    answer = with_markers(reference_turn("/scenario accounts"))
    assert f"Silvia: {answer}\n" in err
    assert err.index("Silvia: ") < err.index(f"wrote {path}: HTTP 200")  # streamed first
    assert "Sources" in err
    assert "the session reloaded (HTTP 200)" in err
    recording = Recording.load(path)
    assert recording.request.body["message"] == "Where do I stand?"
    assert isinstance(_replayed_target(recording), AccountsTarget)

    status, _, _ = run(["record", "/scenario accounts", "--redact", "-o", str(path)], capsys)
    assert status == 0
    assert Recording.load(path).is_redacted
    assert b"plaid" not in path.read_bytes()
    assert b"acct_redacted_0001" in path.read_bytes()


def test_record_on_a_server_named_by_the_flag_or_the_environment(
    loopback: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    monkeypatch.setenv("SILVIA_BASE_URL", "http://127.0.0.1:9")  # the flag wins
    status, out, err = run(["record", "hi", "--base-url", loopback, "-o", str(first)], capsys)
    assert status == 0
    assert f"silvia record: using {loopback} (from --base-url)" in err
    data = first.read_bytes()
    assert TOKEN.encode() not in data
    assert TOKEN not in out + err
    assert b'"provider": "plaid"' not in data  # JSON inside a text: escaped quotes
    assert b'\\"provider\\":\\"plaid\\"' in data  # kept by default: raw wire data

    reload = Recording.load(first).reload
    assert reload is not None
    session_id = reload.path.rsplit("/", 1)[1]
    monkeypatch.setenv("SILVIA_BASE_URL", loopback)
    status, _, err = run(
        ["record", "and then?", "--session", session_id, "-o", str(second)], capsys
    )
    assert status == 0
    assert f"silvia record: using {loopback} (from SILVIA_BASE_URL)" in err
    recording = Recording.load(second)
    assert recording.request.body == {"message": "and then?", "sessionId": session_id}
    assert recording.reload is not None
    assert len(json.loads(recording.reload.body)["messages"]) == 4


def test_what_goes_wrong_is_one_line_and_no_credential_is_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "failed.jsonl"
    for scenario in ("fault-drop", "status-500"):  # a failed turn is written all the same
        status, _, err = run(["record", f"/scenario {scenario}", "-o", str(path)], capsys)
        assert status == 1
        assert f"wrote {path}" in err
        assert "(as recorded)" in err
        assert Recording.load(path).reload is None

    path = tmp_path / "missing-directory" / "turn.jsonl"
    status, _, err = run(["record", "hi", "-o", str(path)], capsys)
    assert status == 1
    assert err.splitlines()[-1] == f"silvia record: cannot write {path}: No such file or directory"

    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    path = tmp_path / "none.jsonl"
    status, out, err = run(
        ["record", "hi", "--base-url", "http://127.0.0.1:9", "-o", str(path)], capsys
    )
    assert status == 1
    lines = err.strip().splitlines()
    assert len(lines) == 2  # which server, then the error
    assert lines[-1].startswith("silvia record: APIConnectionError: ")
    assert TOKEN not in out + err
    assert not path.exists()

    monkeypatch.chdir(tmp_path)
    for argv in (
        ["record", "hi"],  # no -o
        ["record", "  ", "-o", "x.jsonl"],
        ["record", "hi", "-o", "x.jsonl", "--base-url", "ftp://example.com"],
    ):
        assert run(argv, capsys)[0] == 2, argv
        assert not (tmp_path / "x.jsonl").exists()
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    choice = choose_server(f"https://api.example/v1/{TOKEN}", "record")
    err = capsys.readouterr().err
    assert err == "silvia record: using https://api.example/v1/<token> (from --base-url)\n"
    assert choice.transport is None
    assert choice.client_options() == {"base_url": f"https://api.example/v1/{TOKEN}"}
    assert shown_url(f"https://api.example/{TOKEN}/x") == "https://api.example/<token>/x"
    assert shown_url("https://user:pw@api.example/v1") == "https://api.example/v1"
    with pytest.raises(UsageError, match="must not hold credentials") as refused:
        choose_server("https://user:pw@api.example/v1", "record")
    assert "pw" not in str(refused.value)
    assert capsys.readouterr().err == ""
    embedded = choose_server(None, "record")
    assert embedded.embedded
    assert embedded.client_options()["token"]
    assert "embedded reference server" in capsys.readouterr().err


def test_serve_replay_refuses_what_it_cannot_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad, new = tmp_path / "good.jsonl", tmp_path / "bad.jsonl", tmp_path / "new.jsonl"
    (tmp_path / "a").mkdir()
    transport = ReferenceServer().transport()
    turn = record_turn("hi", base_url=IN_PROCESS_URL, token="t", transport=transport)
    for path in (good, tmp_path / "a" / "good.jsonl"):
        turn.save(path)
    lines = good.read_text(encoding="utf-8").splitlines()
    bad.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20] + "\n", encoding="utf-8")
    new.write_text(good.read_text().replace('"version": 1', '"version": 7', 1))
    cases = [
        (
            [str(good), str(bad)],
            f"{bad}: line 4: not a JSON line (is the file truncated or corrupted?)",
        ),
        ([str(new)], "format version 7 is newer"),
        ([str(tmp_path / "nope.jsonl")], "cannot read"),
        ([str(good), str(tmp_path / "a" / "good.jsonl")], "two recordings named 'good'"),
        ([str(good), "--scenario", "demo"], "--replay serves recordings"),
        ([str(good), "--list"], "--replay serves recordings"),
        ([str(good), "--pace", "0.1"], "--replay serves recordings"),
    ]
    for argv, said in cases:
        status, out, err = run(["serve", "--replay", *argv], capsys)
        assert (status, out) == (2, ""), argv
        assert err.startswith("silvia serve: "), err
        assert said in err, err
        assert len(err.splitlines()) == 1
    assert run(["serve", "--timing"], capsys) == (
        2,
        "",
        "silvia serve: --timing goes with --replay\n",
    )
