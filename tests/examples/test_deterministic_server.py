"""`ReferenceServer(deterministic=True)`: what the example notebook runs on.

Two such servers given the same requests store the same sessions, byte for
byte: ids count up and timestamps are fixed. Without the flag, ids stay random.
"""

from __future__ import annotations

import json

from silvia_client.testing import ReferenceServer


def run(server: ReferenceServer) -> tuple[list[str | None], list[dict[str, object]]]:
    with server.client() as client:
        ids = []
        for message in ("hi", "/scenario market-data and stocks?"):
            with client.chat.stream(message) as stream:
                ids.append(stream.until_done().session_id)
        with client.chat.stream("again", session_id=ids[0]) as stream:
            stream.until_done()
    bodies = [server.sessions.body(str(session_id)) for session_id in ids]
    return ids, [body for body in bodies if body is not None]


def test_two_deterministic_servers_store_the_same_sessions() -> None:
    ids, bodies = run(ReferenceServer(deterministic=True))
    again_ids, again_bodies = run(ReferenceServer(deterministic=True))
    assert ids == again_ids == ["sess_0001", "sess_0002"]
    assert json.dumps(bodies) == json.dumps(again_bodies)
    first = bodies[0]
    messages = first["messages"]
    assert isinstance(messages, list)
    assert [m["id"] for m in messages] == ["msg_0001", "msg_0002", "msg_0005", "msg_0006"]
    assert {m["created_at"] for m in messages} == {"2025-01-01T00:00:00.000Z"}


def test_ids_stay_random_by_default() -> None:
    ids, _ = run(ReferenceServer())
    again, _ = run(ReferenceServer())
    assert all(i and i.startswith("sess_") and len(i) == 37 for i in ids + again)
    assert set(ids).isdisjoint(again)
