"""The server's door (serve/app.py BodyLimit) for a client that leaves: a request whose
client disconnects after sending it has its handler cancelled (which gives its sentences
up, test_serve_batcher.py), one that leaves mid-body never reaches the app, and an answer
already sent is never cancelled."""

import asyncio

from translator.serve.app import BodyLimit

BODY = {"type": "http.request", "body": b'{"text": "Ein Hund."}', "more_body": False}
GONE = {"type": "http.disconnect"}


def scope() -> dict:
    return {"type": "http", "path": "/translate", "headers": []}


def client(messages: list, leave_after: float | None):
    """A server's receive(): `messages`, then the disconnect after `leave_after` seconds
    (None: only once the answer has been sent, as a server says then)."""
    queue = list(messages)
    answered = asyncio.Event()

    async def receive():
        if queue:
            return queue.pop(0)
        if leave_after is None:
            await answered.wait()
        else:
            await asyncio.sleep(leave_after)
        return GONE

    return receive, answered


def run(app, messages, leave_after):
    sent = []

    async def main():
        receive, answered = client(messages, leave_after)

        async def send(message):
            sent.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                answered.set()

        await BodyLimit(app, 1000)(scope(), receive, send)

    asyncio.run(asyncio.wait_for(main(), 10))
    return sent


def slow_app(seconds: float, seen: dict):
    async def app(scope, receive, send):
        seen["body"] = (await receive())["body"]
        try:
            await asyncio.sleep(seconds)  # decoding
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
        seen["answered"] = True
        seen["after"] = await receive()  # what a streamed answer listens for

    return app


def test_a_client_that_leaves_has_its_handler_cancelled():
    seen = {}
    sent = run(slow_app(5.0, seen), [BODY], leave_after=0.1)
    assert seen == {"body": BODY["body"], "cancelled": True} and sent == []


def test_a_client_that_stays_gets_its_answer_and_the_app_hears_the_end():
    seen = {}
    sent = run(slow_app(0.1, seen), [BODY], leave_after=None)
    assert seen["answered"] and "cancelled" not in seen and seen["after"] == GONE
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]


def test_a_client_that_leaves_mid_body_never_reaches_the_app():
    seen = {}
    half = {"type": "http.request", "body": b'{"text": ', "more_body": True}
    sent = run(slow_app(0.1, seen), [half, GONE], leave_after=0.0)
    assert seen == {} and sent == []


def test_a_body_over_the_limit_is_answered_413_unread():
    seen = {}
    big = {"type": "http.request", "body": b"x" * 1001, "more_body": False}
    sent = run(slow_app(0.1, seen), [big], leave_after=None)
    assert seen == {} and sent[0]["status"] == 413
