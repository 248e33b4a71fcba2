"""`silvia record` and `silvia serve --replay`'s refusals, as a user runs them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from silvia_client.citations import AccountsTarget
from silvia_client.cli import main
from silvia_client.cli._args import UsageError
from silvia_client.cli._server import choose_server, shown_url
from silvia_client.testing import Recording, ReferenceServer

TOKEN = "record-cli-s3cret-token"


@pytest.fixture(autouse=True)
def _no_server_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SILVIA_BASE_URL", raising=False)
    monkeypatch.delenv("SILVIA_TOKEN", raising=False)


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with ReferenceServer(token=TOKEN).serve_loopback() as url:
        yield url


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(args)
    out, err = capsys.readouterr()
    return status, out, err


def test_record_on_the_embedded_server_says_so_and_writes_a_replayable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "turn.jsonl"
    status, out, err = run(["record", "/scenario accounts", "-o", str(path)], capsys)
    assert status == 0
    assert out == ""
    assert "using the embedded reference server" in err
    assert f"wrote {path}: HTTP 200" in err
    assert "the session reloaded (HTTP 200)" in err
    recording = Recording.load(path)
    with recording.client() as client, client.chat.stream("again") as stream:
        turn = stream.until_done()
    assert isinstance(turn.citations[0].target, AccountsTarget)


@pytest.mark.parametrize("how", ["flag", "env"])
def test_record_uses_the_flag_else_the_environment_and_says_which(
    how: str,
    server_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    path = tmp_path / "turn.jsonl"
    args = ["record", "How much is in checking?", "-o", str(path)]
    if how == "flag":
        args += ["--base-url", server_url]
        monkeypatch.setenv("SILVIA_BASE_URL", "http://127.0.0.1:9")  # the flag wins
    else:
        monkeypatch.setenv("SILVIA_BASE_URL", server_url)
    status, out, err = run(args, capsys)
    assert status == 0
    source = "--base-url" if how == "flag" else "SILVIA_BASE_URL"
    assert f"silvia record: using {server_url} (from {source})" in err
    data = path.read_bytes()
    assert TOKEN.encode() not in data
    assert TOKEN not in out + err
    assert b'"provider": "plaid"' not in data  # JSON inside a text: escaped quotes
    assert b'\\"provider\\":\\"plaid\\"' in data  # kept by default: raw wire data


def test_record_continues_a_session(
    server_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert run(["record", "hi", "--base-url", server_url, "-o", str(first)], capsys)[0] == 0
    reload = Recording.load(first).reload
    assert reload is not None
    session_id = reload.path.rsplit("/", 1)[1]
    args = ["record", "and then?", "--session", session_id, "--base-url", server_url]
    assert run([*args, "-o", str(second)], capsys)[0] == 0
    recording = Recording.load(second)
    assert recording.request.body == {"message": "and then?", "sessionId": session_id}
    assert recording.reload is not None
    assert len(json.loads(recording.reload.body)["messages"]) == 4


def test_record_redact_writes_the_copy_to_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "shared.jsonl"
    status, _, _ = run(["record", "/scenario accounts", "--redact", "-o", str(path)], capsys)
    assert status == 0
    recording = Recording.load(path)
    assert recording.is_redacted
    assert b"plaid" not in path.read_bytes()
    assert b"acct_redacted_0001" in path.read_bytes()


@pytest.mark.parametrize("scenario", ["fault-drop", "status-500"])
def test_a_failed_turn_is_written_all_the_same_and_exits_1(
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "failed.jsonl"
    status, _, err = run(["record", f"/scenario {scenario}", "-o", str(path)], capsys)
    assert status == 1
    assert f"wrote {path}" in err
    assert "(as recorded)" in err
    assert Recording.load(path).reload is None


def test_an_unreachable_server_is_one_line_and_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SILVIA_TOKEN", TOKEN)
    path = tmp_path / "none.jsonl"
    status, out, err = run(
        ["record", "hi", "--base-url", "http://127.0.0.1:9", "-o", str(path)], capsys
    )
    assert status == 1
    lines = err.strip().splitlines()
    assert lines[-1].startswith("silvia record: APIConnectionError: ")
    assert len(lines) == 2  # which server, then the error
    assert "Traceback" not in err
    assert TOKEN not in out + err
    assert not path.exists()


def test_an_unwritable_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "missing-directory" / "turn.jsonl"
    status, _, err = run(["record", "hi", "-o", str(path)], capsys)
    assert status == 1
    assert err.strip().splitlines()[-1] == (
        f"silvia record: cannot write {path}: No such file or directory"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["record", "hi"],  # no -o
        ["record", "  ", "-o", "x.jsonl"],
        ["record", "hi", "-o", "x.jsonl", "--base-url", "ftp://example.com"],
    ],
)
def test_usage_errors_exit_2(
    args: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        status = main(args)
    except SystemExit as exit:  # argparse's own usage errors
        status = int(exit.code or 0)
    assert status == 2
    assert not (tmp_path / "x.jsonl").exists()


# -- the server choice ---------------------------------------------------------------------------


def test_choose_server_never_prints_credentials(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
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


def test_choose_server_falls_back_to_the_embedded_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    choice = choose_server(None, "record")
    assert choice.embedded
    assert choice.client_options()["token"]
    assert "embedded reference server" in capsys.readouterr().err


# -- serve --replay refusals ---------------------------------------------------------------------


def test_serve_replay_refuses_a_bad_file_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.jsonl"
    assert run(["record", "hi", "-o", str(good)], capsys)[0] == 0
    lines = good.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20] + "\n", encoding="utf-8")
    status, _, err = run(["serve", "--replay", str(good), str(bad)], capsys)
    assert status == 2
    assert err == (
        f"silvia serve: {bad}: line 4: not a JSON line (is the file truncated or corrupted?)\n"
    )


def test_serve_replay_refuses_a_newer_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "new.jsonl"
    assert run(["record", "hi", "-o", str(path)], capsys)[0] == 0
    path.write_text(path.read_text().replace('"version": 1', '"version": 7', 1))
    status, _, err = run(["serve", "--replay", str(path)], capsys)
    assert status == 2
    assert "format version 7 is newer" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("extra", [["--scenario", "demo"], ["--list"], ["--pace", "0.1"]])
def test_serve_replay_takes_no_scenario_options(
    extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "turn.jsonl"
    assert run(["record", "hi", "-o", str(path)], capsys)[0] == 0
    status, _, err = run(["serve", "--replay", str(path), *extra], capsys)
    assert status == 2
    assert "--replay serves recordings" in err


def test_serve_replay_refuses_a_missing_file_and_two_of_one_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run(["serve", "--replay", str(tmp_path / "nope.jsonl")], capsys)
    assert status == 2
    assert "cannot read" in err
    (tmp_path / "a").mkdir()
    for path in (tmp_path / "x.jsonl", tmp_path / "a" / "x.jsonl"):
        assert run(["record", "hi", "-o", str(path)], capsys)[0] == 0
    status, _, err = run(
        ["serve", "--replay", str(tmp_path / "x.jsonl"), str(tmp_path / "a" / "x.jsonl")], capsys
    )
    assert status == 2
    assert "two recordings named 'x'" in err


def test_timing_goes_with_replay(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(["serve", "--timing"], capsys)
    assert status == 2
    assert "--timing goes with --replay" in err
