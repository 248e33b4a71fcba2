"""A turn replayed from a recording keeps the request id it was recorded with (issue 21: ids on
success), as does the session reloaded with it."""

from __future__ import annotations

from silvia_client.testing import IN_PROCESS_URL, ReferenceServer, record_turn


def test_a_replayed_turn_and_session_keep_their_recorded_request_ids() -> None:
    server = ReferenceServer()
    recording = record_turn("hi", transport=server.transport(), base_url=IN_PROCESS_URL, token="t")
    recorded = {name.lower(): value for name, value in recording.response.headers}
    with recording.client() as client:
        turn = client.chat.send("hi")
        assert turn.request_id is not None
        assert turn.request_id == recorded["x-request-id"]
        assert turn.session_id is not None
        session = client.sessions.get(turn.session_id)
    assert session.request_id is not None
    assert session.request_id != turn.request_id  # each response its own id
