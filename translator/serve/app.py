"""The FastAPI app: /translate, /score, /attention, /health and the page at /.

Every error reaches the client as one line of JSON, {"error": "..."}, with a 4xx status
for the client's mistakes and limits, 503 when the server is too busy, and 500 (the
traceback goes to the server's log only) for a bug.
"""

from __future__ import annotations

import json
import logging
import time
from importlib import resources

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException

from translator.config.languages import source_languages, target_languages
from translator.decode.guide import Guides, target_prefixes
from translator.decode.line_guides import Terms
from translator.decode.rules import nbest_problem
from translator.engines.load import source_prefix
from translator.errors import UserError, one_line
from translator.serve.batcher import Batcher
from translator.serve.limits import LimitError, Limits
from translator.serve.requests import (
    AttentionRequest,
    Cancelled,
    OffLoop,
    ScoreRequest,
    TranslateRequest,
    check_fields,
)

log = logging.getLogger(__name__)


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": one_line(message)}, status_code=status)


def _validation_message(request: Request, err: RequestValidationError) -> tuple[int, str]:
    """(400 for a body that is not JSON, 422 otherwise, the first problem in one line)."""
    problems = err.errors()
    first = problems[0] if problems else {}
    if first.get("type") == "json_invalid":
        return 400, "the body is not valid JSON"
    kind = request.headers.get("content-type", "application/json")
    if first.get("loc") == ("body",) and "json" not in kind:
        return 400, f"send a JSON object with Content-Type: application/json, not {kind}"
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    return 422, f"{where}: {first.get('msg', 'invalid request')}"


def create_app(
    translator,
    path: str,
    limits: Limits,
    batcher: Batcher,
    tag: str | None = None,
    tgt_lang: str | None = None,
) -> FastAPI:
    """The app; the caller runs `batcher`'s decoding loop and stops it once the server has
    stopped (`translator serve` does both, serve/command.py). `tag`: the corpus tag put
    before every source; `tgt_lang`: the target language of requests that name none."""
    data = translator.cfg.data
    targets = target_languages(data)
    info = {
        "model": path,
        **translator.describe(),
        "source_languages": source_languages(data),
        "target_languages": targets,
        "tgt_lang": tgt_lang,  # what a request that names no language gets
    }
    sources = ", ".join(info["source_languages"])
    app = FastAPI(title="translator", summary=f"{info['family']} {sources} -> {', '.join(targets)}")
    app.state.batcher = batcher
    off_loop = OffLoop(limits)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, err: RequestValidationError):
        return error(*_validation_message(request, err))

    @app.exception_handler(HTTPException)
    async def _http(request: Request, err: HTTPException):  # 404, 405: FastAPI's own
        return error(err.status_code, str(err.detail))

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

    def source_of(lang: str | None) -> list[int]:
        """The ids put before each source of a request for `lang` (the server's default when
        None): its language tag, then the corpus tag, as load_engine orders them; a missing
        or unknown language is a UserError (400) listing the model's."""
        return source_prefix(translator.tokenizer, data, lang or tgt_lang, tag, "tgt_lang")

    def beam_of(beam: int | None, nbest: int) -> int:
        if beam is None:
            beam = max(info["beam"], nbest)
        elif problem := nbest_problem(nbest, beam):
            raise LimitError(422, problem)
        if beam > limits.max_beam:
            raise LimitError(422, f"beam {beam} is over this server's limit of {limits.max_beam}")
        return beam

    def check_texts(texts: list[str]) -> None:
        if len(texts) > limits.max_texts:
            raise LimitError(
                413, f"{len(texts)} texts in one request; the limit is {limits.max_texts}"
            )
        for i, text in enumerate(texts):
            if len(text) > limits.max_chars:
                raise LimitError(
                    413, f"text {i} has {len(text)} characters; the limit is {limits.max_chars}"
                )

    def prefixes_of(req: TranslateRequest, texts: list[str]) -> list[str] | None:
        """Each text's prefix, checked here so that a bad one is the client's 4xx."""
        if req.prefix is not None and req.prefixes is not None:
            raise LimitError(422, 'give "prefix" (for every text) or "prefixes", not both')
        if req.prefixes is not None and len(req.prefixes) != len(texts):
            raise LimitError(
                422, f"{len(req.prefixes)} prefixes for {len(texts)} texts: give one per text"
            )
        given = [req.prefix] * len(texts) if req.prefix is not None else req.prefixes
        if given is None or not any(given):
            return None
        check_texts(given)
        steps = translator.cfg.model.max_positions
        target_prefixes(translator.tokenizer, given, texts, steps)  # raises a UserError: 400
        return given

    def constraints_of(req, texts, beam, prefixes, cancelled) -> list[list[str]] | None:
        """Each text's required phrases: `constraints` and the `terms` found in it (a large
        glossary takes seconds: it stops once its request has timed out)."""
        if req.terms and len(req.terms) > limits.max_terms:
            raise LimitError(
                413, f"terms: {len(req.terms)} in one request; the limit is {limits.max_terms}"
            )
        glossary = Terms(list(req.terms.items())) if req.terms else None
        musts = [list(req.constraints or []) for _ in texts]
        if glossary is not None:
            for given, text in zip(musts, texts):
                if cancelled():
                    raise Cancelled
                given += [t for t in glossary.found(text) if t not in given]
        if not any(musts):
            return None
        if info["engine"] != "pytorch":
            raise LimitError(400, "an exported (CTranslate2) model cannot require phrases")
        check_texts([p for given in musts for p in given])
        steps = translator.cfg.model.max_positions
        Guides.read(translator.tokenizer, texts, steps, beam, prefixes, musts)  # UserError: 400
        return musts

    def parse_translate(req: TranslateRequest, cancelled):
        """The work a translate request asks for, checked (tokenizing its prefixes, parsing
        its glossary and constraints: CPU work, run off the event loop)."""
        check_fields(req)
        if (req.text is None) == (req.texts is None):
            raise LimitError(422, 'give either "text" (a string) or "texts" (a list of strings)')
        texts = [req.text] if req.text is not None else req.texts
        check_texts(texts)
        source = source_of(req.tgt_lang)
        beam = beam_of(req.beam, req.nbest)
        prefixes = prefixes_of(req, texts)
        if cancelled():
            raise Cancelled
        musts = constraints_of(req, texts, beam, prefixes, cancelled)
        return texts, beam, prefixes, musts, source

    @app.post("/translate")
    async def translate(req: TranslateRequest) -> dict:
        """Translate `text` or `texts`; `nbest` > 1 adds that many hypotheses with scores."""
        deadline = time.monotonic() + limits.timeout  # for parsing and decoding together
        parsed = await off_loop.run(parse_translate, req)
        texts, beam, prefixes, musts, source = parsed
        results = []
        if texts:
            left = deadline - time.monotonic()
            results = await batcher.translate(texts, beam, req.nbest, prefixes, musts, source, left)
        answer: dict = {
            "beam": beam,
            "translations": [hyps[0].text for hyps in results],
            "scores": [round(hyps[0].score, 4) for hyps in results],
        }
        if req.nbest > 1:
            answer["nbest"] = [
                [{"text": h.text, "score": round(h.score, 4)} for h in hyps] for hyps in results
            ]
        return answer

    def parse_score(req: ScoreRequest, cancelled) -> list[int]:
        check_fields(req)
        if len(req.sources) != len(req.targets):
            raise LimitError(
                422, f"{len(req.sources)} sources but {len(req.targets)} targets: give one each"
            )
        check_texts(req.sources)
        check_texts(req.targets)
        return source_of(req.tgt_lang)

    @app.post("/score")
    async def score(req: ScoreRequest) -> dict:
        """How likely the model finds each target given its source: the log-probability
        summed over its subwords and <eos> (logprob), per subword (mean), and how many."""
        deadline = time.monotonic() + limits.timeout
        source = await off_loop.run(parse_score, req)
        found = await batcher.call(
            lambda: translator.score(req.sources, req.targets), source, deadline - time.monotonic()
        )
        return {"scores": [{k: round(v, 4) for k, v in s.as_dict().items()} for s in found]}

    def parse_attention(req: AttentionRequest, cancelled):
        """(source ids, beam, target prefix ids) of an attention request, checked."""
        check_fields(req)
        if not info["attention"]:
            what = (
                "an exported (CTranslate2) model has no attention weights to show; serve the "
                "checkpoint file to see them"
                if info["engine"] != "pytorch"
                else f"the {info['family']} model has no attention weights to show"
            )
            raise LimitError(400, what)
        check_texts([req.text])
        layers = translator.attention_layers
        if not -layers <= req.layer < layers:
            raise LimitError(
                422, f"layer {req.layer}: the model has {layers} (0..{layers - 1}, or -1)"
            )
        if not req.text.strip():
            raise LimitError(422, "text: an empty sentence has no attention to show")
        source = source_of(req.tgt_lang)
        beam = beam_of(req.beam, 1)
        prefix = None
        if req.prefix:
            check_texts([req.prefix])
            steps = translator.cfg.model.max_positions
            prefix = target_prefixes(translator.tokenizer, [req.prefix], [req.text], steps)[0]
        return source, beam, prefix

    @app.post("/attention")
    async def attention(req: AttentionRequest) -> dict:
        """One sentence's translation, its source and target pieces, and the attention
        weights [target piece][source piece] the model gives while producing it."""
        deadline = time.monotonic() + limits.timeout
        source, beam, prefix = await off_loop.run(parse_attention, req)
        # The search that translates the sentence gives the weights, on the decoding thread.
        dc = translator.cfg.decode.replace(beam=beam)
        best, pieces, target, matrix = await batcher.call(
            lambda: translator.attention(req.text, dc, req.layer, prefix),
            source,
            deadline - time.monotonic(),
        )
        return {
            "translation": best.text,
            "score": round(best.score, 4),
            "beam": beam,
            "source": pieces,
            "target": target,
            "attention": [[round(float(w), 4) for w in row] for row in matrix],
            "label": translator.attention_label(req.layer),
        }

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

    page = resources.files("translator.serve").joinpath("static/index.html").read_text("utf-8")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> str:
        return page

    return BodyLimit(app, limits.max_body)


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes is answered 413 before the app
    reads it, whether the client declared its length or streams it in chunks."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            return await self._reject(send)
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, receive, send)  # a disconnect: let the app see it
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                return await self._reject(send)
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)

    async def _reject(self, send) -> None:
        body = json.dumps(
            {"error": f"the request body is over this server's limit of {self.limit} bytes"}
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})
