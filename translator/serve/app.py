"""The FastAPI app: /translate, /score, /attention, /health and the page at /.

Every error reaches the client as one line of JSON, {"error": "..."}, with a 4xx status
for the client's mistakes and limits, 503 when the server is too busy, and 500 (the
traceback goes to the server's log only) for a bug.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from importlib import resources

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException

from translator.config.languages import default_target, served_languages, served_target
from translator.errors import UserError, one_line
from translator.serve.batcher import Batcher
from translator.serve.libretranslate import mount as mount_libretranslate
from translator.serve.libretranslate_io import cors
from translator.serve.limits import LimitError, Limits
from translator.serve.parse import Door, parse_attention, parse_score, parse_translate
from translator.serve.requests import AttentionRequest, OffLoop, ScoreRequest, TranslateRequest

log = logging.getLogger(__name__)


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": one_line(message)}, status_code=status)


def _validation_message(request: Request, err: RequestValidationError) -> tuple[int, str]:
    """(400 for a body that is not a JSON object, 422 for a field, the first problem in one
    line)."""
    problems = err.errors()
    first = problems[0] if problems else {}
    if first.get("type") == "json_invalid":
        return 400, "the body is not valid JSON"
    if first.get("loc") == ("body",):  # the body as a whole
        kind = request.headers.get("content-type")
        if first.get("type") == "missing":
            return 400, "the body is empty; send a JSON object"
        # FastAPI reads a body as JSON only under a JSON Content-Type: one without any is
        # what a browser may send cross-site unasked, so it is left unread
        if not kind:
            return 400, "send the body as JSON with Content-Type: application/json (none given)"
        if "json" not in kind:
            return 400, f"send a JSON object with Content-Type: application/json, not {kind}"
        return 400, f"the body must be a JSON object, not {_json_kind(first.get('input'))}"
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    return 422, f"{where}: {first.get('msg', 'invalid request')}"


def _json_kind(value) -> str:
    names = {type(None): "null", bool: "true or false", list: "an array", str: "a string"}
    return names.get(type(value), "a number")


# what FastAPI says of a JSON body it cannot decode as UTF-8
UNREADABLE_BODY = "There was an error parsing the body"


def create_app(
    engine, path: str, limits: Limits, batcher: Batcher, door: Door, api_key: str | None = None
) -> FastAPI:
    """The app; the caller runs `batcher`'s decoding loop and stops it once the server has
    stopped (`translator serve` does both, commands/serve.py). `door`: what checking a
    request needs (serve/parse.py); `api_key`: what LibreTranslate's routes require."""
    info = _info(engine, path, door)
    sources, targets = (", ".join(info[k]) for k in ("source_languages", "target_languages"))
    app = FastAPI(title="translator", summary=f"{info['family']} {sources} -> {targets}")
    app.state.batcher = batcher
    off_loop = OffLoop(limits)
    _handlers(app)

    @app.post("/translate")
    async def translate(req: TranslateRequest) -> dict:
        """Translate `text` or `texts`; `nbest` > 1 adds that many hypotheses with scores."""
        deadline = time.monotonic() + limits.timeout  # for parsing and decoding together
        texts, request = await off_loop.run(parse_translate, door, req)
        results = []
        if texts:
            left = deadline - time.monotonic()
            results = await batcher.translate(texts, request, left)
        return translation_answer(request, results, getattr(engine, "calibration", None))

    @app.post("/score")
    async def score(req: ScoreRequest) -> dict:
        """How likely the model finds each target given its source: the log-probability
        summed over its subwords and <eos> (logprob), per subword (mean), and how many."""
        deadline = time.monotonic() + limits.timeout
        request = await off_loop.run(parse_score, door, req)
        found = await batcher.call(
            lambda: engine.score(req.sources, req.targets, request), deadline - time.monotonic()
        )
        return {"scores": [{k: round(v, 4) for k, v in s.as_dict().items()} for s in found]}

    @app.post("/attention")
    async def attention(req: AttentionRequest) -> dict:
        """One sentence's translation, its source and target pieces, and the attention
        weights [target piece][source piece] the model gives while producing it."""
        deadline = time.monotonic() + limits.timeout
        request = await off_loop.run(parse_attention, door, req)
        # The search that translates the sentence gives the weights, on the decoding thread.
        best, pieces, target, matrix = await batcher.call(
            lambda: engine.attention(req.text, request, req.layer), deadline - time.monotonic()
        )
        return {
            "translation": best.text,
            "score": round(best.score, 4),
            "beam": request.decode.beam,
            "source": pieces,
            "target": target,
            "attention": [[round(float(w), 4) for w in row] for row in matrix],
            "label": engine.attention_label(req.layer),
        }

    _model_routes(app, engine, info, batcher)
    page = resources.files("translator.serve").joinpath("static/index.html").read_text("utf-8")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> str:
        return page

    mount_libretranslate(app, engine, door, batcher, api_key, off_loop)  # serve/libretranslate.py
    return BodyLimit(app, limits.max_body)


def _model_routes(app: FastAPI, engine, info: dict, batcher: Batcher) -> None:
    """/health and /language: what the server tells of its model."""

    @app.get("/health")
    async def health() -> dict:
        """The model being served, and the queue."""
        return {
            "status": "ok",
            **info,
            "queued": batcher.pending,
            "sentences": batcher.sentences,
            "batches": batcher.batches,
            "batch_sentences": batcher.batch_sentences,
        }

    @app.get("/language")
    async def language(tgt_lang: str) -> dict:
        """The model's own code for a target language named in any spelling `tgt_lang`
        takes (`fr` for NLLB's fra_Latn), as the page's menu lists them."""
        data = engine.cfg.data
        return {"tgt_lang": served_target(data, engine.language_codes, tgt_lang)}


def _info(engine, path: str, door: Door) -> dict:
    """What /health reports of the model being served."""
    data, codes = engine.cfg.data, engine.language_codes
    return {
        "model": path,
        **engine.describe(),
        "beam": door.decode.beam,
        "max_beam": door.limits.max_beam,  # (the page's beam menu offers up to it)
        **served_languages(data, codes),
        # what a request that names no language gets, as the model's code (the page's menu
        # holds those), however --tgt-lang spelled it
        "tgt_lang": default_target(data, codes, door.tgt_lang),
    }


def translation_answer(request, results, calibration=None) -> dict:
    """The body of a /translate answer: each text's best translation and score, its n-best
    list, word alignments ([[i, j], ...], each hypothesis's) and confidence when asked for
    (`calibration`: the engine's, decode/confidence.py, or None)."""
    answer: dict = {
        "beam": request.decode.beam,
        "translations": [hyps[0].text for hyps in results],
        "scores": [round(hyps[0].score, 4) for hyps in results],
    }
    pairs = (lambda h: [list(p) for p in h.alignment or ()]) if request.alignments else None
    if request.nbest > 1:
        answer["nbest"] = [
            [
                {"text": h.text, "score": round(h.score, 4)}
                | ({"alignment": pairs(h)} if pairs else {})
                | ({"confidence": round(h.confidence, 4)} if request.confidence else {})
                for h in hyps
            ]
            for hyps in results
        ]
    if pairs:
        answer["alignments"] = [pairs(hyps[0]) for hyps in results]
    if request.confidence:
        answer |= confidence_answer([hyps[0] for hyps in results], calibration)
    return answer


# where a model has no calibration, a word the model gives under this probability is doubtful
UNCALIBRATED_THRESHOLD = 0.5


def confidence_answer(best: list, calibration=None) -> dict:
    """The confidence fields of a /translate answer (requests.py TranslateRequest.confidence)
    from each text's best Translation."""
    threshold = UNCALIBRATED_THRESHOLD if calibration is None else calibration.threshold
    per_word = [h.word_confidence or () for h in best]
    return {
        "confidence": [round(h.confidence, 4) for h in best],
        "word_confidence": [[round(w, 4) for w in ws] for ws in per_word],
        "doubtful": [[w < threshold for w in ws] for ws in per_word],
        "confidence_calibrated": calibration is not None,
        "confidence_threshold": round(threshold, 4),
    }


def _handlers(app: FastAPI) -> None:
    """Every error as one line of JSON with its status (module docstring)."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, err: RequestValidationError):
        return error(*_validation_message(request, err))

    @app.exception_handler(HTTPException)
    async def _http(request: Request, err: HTTPException):  # 404, 405: FastAPI's own
        if err.status_code == 400 and err.detail == UNREADABLE_BODY:
            return error(400, "the body cannot be read as JSON: not UTF-8, or nested too deeply")
        answer = error(err.status_code, str(err.detail))
        answer.headers.update(err.headers or {})  # a 405's Allow: the route's methods
        return answer

    @app.exception_handler(LimitError)
    async def _limit(request: Request, err: LimitError):
        return error(err.status, err.message)

    @app.exception_handler(UserError)
    async def _user(request: Request, err: UserError):
        return error(400, err.message)

    @app.exception_handler(Exception)
    async def _bug(request: Request, err: Exception):
        log.error("request to %s failed", request.url.path, exc_info=err)
        return error(500, "internal error while translating (see the server's log)")


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes is answered 413 before the app
    reads it, whether the client declared its length or streams it in chunks; and a request
    whose client leaves is dropped: before its body is whole, unanswered, and after it, by
    cancelling its handler, so the batcher gives its sentences up (the servers cancel
    nothing themselves)."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            return await self._reject(scope, send)
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client left before its request was whole
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                return await self._reject(scope, send)
        return await _until_gone(self.app, scope, body, receive, send)

    async def _reject(self, scope, send) -> None:
        body = json.dumps(
            {"error": f"the request body is over this server's limit of {self.limit} bytes"}
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        headers += cors(scope["path"])  # a browser shows LibreTranslate's clients this answer
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def _until_gone(app, scope, body: bytes, receive, send) -> None:
    """Run `app` on a request whose `body` has been read, and cancel it where the client
    leaves before the answer is sent. After the body, the server's receive() returns only
    when the connection is gone or the answer has been sent; the app, if it asks again (a
    streamed answer listens for the disconnect), gets that same message."""
    heard: asyncio.Future = asyncio.get_running_loop().create_future()
    replayed, answered = False, False

    async def replay():
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await asyncio.shield(heard)

    async def sending(message) -> None:
        nonlocal answered
        await send(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            answered = True

    async def listen() -> None:
        heard.set_result(await receive())

    handling = asyncio.ensure_future(app(scope, replay, sending))
    listener = asyncio.ensure_future(listen())
    try:
        await asyncio.wait({handling, listener}, return_when=asyncio.FIRST_COMPLETED)
    finally:  # (this task cancelled too: the server is stopping)
        listener.cancel()
    if handling.done() or answered:
        return await handling
    handling.cancel()  # the client is gone: nobody waits for the answer
    with contextlib.suppress(asyncio.CancelledError):
        await handling
