"""LibreTranslate's HTTP API under /libretranslate/, beside the server's own routes, so the
clients written for it (Mastodon, Weblate, libretranslatepy, deep-translator, browser
extensions) work against `translator serve` unchanged (docs/libretranslate.md).

POST /translate, GET|POST /languages, POST /translate_file, GET /download_file/NAME,
POST /detect, GET /frontend/settings, GET /health, POST /suggest (refused, as LibreTranslate
refuses it with suggestions off). Sentences go through the server's own batcher (either
batching mode), so they share batches with /translate's; errors are LibreTranslate's
{"error": "..."} with its statuses (libretranslate_io.lt_error).
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import re
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse

from translator.decode.request import DecodeRequest
from translator.documents.units import has_letters, in_pieces
from translator.errors import UserError
from translator.serve.libretranslate_io import (
    OPENAPI,
    PREFIX,
    UNZIPPED,
    Calls,
    Door,
    FileStore,
    lt_error,
    read_fields,
    texts_of,
    unzipped_size,
)
from translator.serve.libretranslate_langs import Language, Languages
from translator.serve.limits import LimitError
from translator.serve.requests import Cancelled, OffLoop

log = logging.getLogger(__name__)
FILE_FORMATS = {".txt": "text", ".html": "html", ".htm": "html", ".xhtml": "html",
                ".md": "markdown", ".markdown": "markdown", ".docx": "docx"}  # fmt: skip


def answered(handler: Callable) -> Callable:
    """`handler` with the client's errors answered in LibreTranslate's shape."""

    async def route(request: Request):
        try:
            return await handler(request)
        except LimitError as err:
            return lt_error(err.status, err.message)
        except UserError as err:
            return lt_error(400, err.message)
        except Exception as err:  # a bug: answered here, inside Door, so it carries CORS
            log.error("request to %s failed", request.url.path, exc_info=err)
            return lt_error(500, "internal error while translating (see the server's log)")

    return route


def required(fields: dict, name: str) -> str:
    value = fields.get(name)
    if value is None or value == "":
        raise LimitError(400, f"Invalid request: missing {name} parameter")
    if not isinstance(value, str):
        raise LimitError(400, f"Invalid request: {name} must be a string")
    return value


def alternatives_of(fields: dict, most: int) -> int:
    """The `alternatives` asked, at most `most` (the server's largest beam less the best)."""
    value = fields.get("alternatives", 0)
    try:
        if isinstance(value, bool) or isinstance(value, float):
            raise ValueError
        count = max(0, int(value))
    except (TypeError, ValueError):
        raise LimitError(400, "Invalid request: alternatives parameter is not a number") from None
    if count > most:
        raise LimitError(400, f"Invalid request: alternatives parameter must be <= {most}")
    return count


def split_texts(texts: list[str], lang: str, cancelled: Callable[[], bool]) -> list[list]:
    """Each text's line_spans (on OffLoop's worker), stopping once the request timed out."""
    spans = []
    for text in texts:
        if cancelled():
            raise Cancelled
        spans.append(line_spans(text, lang))
    return spans


def line_spans(text: str, lang: str) -> list[tuple[int, int]]:
    """The sentence spans of `text`, each line split on its own (a line break always ends a
    sentence), the whitespace between them left out (documents/segment.py)."""
    from translator.documents.segment import sentence_spans

    spans, start = [], 0
    for line in text.split("\n"):
        spans += [(start + a, start + b) for a, b in sentence_spans(line, lang)]
        start += len(line) + 1
    return spans


def _pairs(alignment) -> list[tuple[int, int]] | None:
    return None if alignment is None else [tuple(pair) for pair in alignment]


def put_back(text: str, spans: list[tuple[int, int]], pieces: list[str]) -> str:
    out, last = [], 0
    for (a, b), piece in zip(spans, pieces, strict=True):
        out += [text[last:a], piece]
        last = b
    return "".join(out) + text[last:]


class LibreTranslate:
    """The routes' state: the server's engine, batcher and checking door, the languages as
    LibreTranslate names them, the key a request must give (None: any), the files."""

    def __init__(self, engine, door, batcher, api_key: str | None = None, off_loop=None):
        self.engine, self.door, self.batcher = engine, door, batcher
        self.limits = door.limits
        # the server's worker for CPU work: splitting waits in its queue, under its limits
        self.off_loop = off_loop or OffLoop(self.limits)
        self.langs = Languages(engine)
        self.api_key = api_key
        self.files = FileStore()

    def check_key(self, fields: dict) -> None:
        if self.api_key is None:
            return
        given = fields.get("api_key")
        if not given:
            raise LimitError(403, "Invalid API key: this server requires an api_key")
        # surrogatepass: a lone surrogate (valid in JSON) is a wrong key, not an encoding error
        if not isinstance(given, str) or not secrets.compare_digest(
            given.encode("utf-8", "surrogatepass"), self.api_key.encode()
        ):
            raise LimitError(403, "Invalid API key")

    def request(self, src: Language, tgt: Language, nbest: int = 1, align: bool = False):
        """How to decode sentences from `src` into `tgt`: the server's settings, a beam of
        at least `nbest`, word alignments where asked and the engine gives them."""
        from translator.engines.load import starts

        engine, door = self.engine, self.door
        both = engine.language_codes is not None and engine.language_codes.at == "both"
        prefix, start = starts(engine.cfg, engine.tokenizer, engine.language_codes, door.tag,
                               tgt.model, any_language=True, src_lang=src.model if both else None,
                               option="target")  # fmt: skip
        beam = door.beam_of(None, nbest)
        request = DecodeRequest(door.decode.replace(beam=beam), nbest, source=tuple(prefix),
                                target_start=start)  # fmt: skip
        if align and getattr(engine.capabilities, "alignments", False):
            request = request.replace(alignments=True)
        return request

    def check_sentences(self, sentences: list[str]) -> None:
        for sentence in sentences:
            if len(sentence) > self.limits.max_chars:
                raise LimitError(
                    400, f"Invalid request: a sentence of {len(sentence)} characters exceeds "
                    f"the limit ({self.limits.max_chars})",
                )  # fmt: skip

    async def plain(self, texts: list[str], src, tgt, alternatives: int):
        """(each text translated sentence by sentence with its whitespace kept, each one's
        alternatives: other hypotheses of a text of one sentence)."""
        spans = await self.off_loop.run(split_texts, texts, src.code)
        sentences = [text[a:b] for text, sp in zip(texts, spans) for a, b in sp]
        self.check_sentences(sentences)
        asked = [has_letters(s) for s in sentences]  # the rest (numbers) stay as they are
        todo = [s for s, ask in zip(sentences, asked) if ask]
        request = self.request(src, tgt, alternatives + 1)
        found = iter(await self.long_sentences(todo, request))
        results = [next(found) if ask else [s] for s, ask in zip(sentences, asked)]
        out, alts, k = [], [], 0
        for text, sp in zip(texts, spans):
            mine = results[k : k + len(sp)]
            k += len(sp)
            out.append(put_back(text, sp, [hyps[0] for hyps in mine]))
            others = mine[0][1:] if len(mine) == 1 else []
            others = list(dict.fromkeys(t for t in others if t != mine[0][0]))
            alts.append([put_back(text, sp, [t]) for t in others[:alternatives]])
        return out, alts

    async def long_sentences(self, sentences: list[str], request) -> list[list[str]]:
        """Each sentence's hypotheses' texts; one of more than LONGEST words (text that runs
        on without a stop) translated in pieces (documents.units.in_pieces), joined, as one
        hypothesis, where a model's length limit would cut it off."""
        flat, parts = in_pieces(sentences)
        found = iter(await self.batcher.translate(flat, request) if flat else [])
        out = []
        for ps in parts:
            if len(ps) == 1:
                out.append([h.text for h in next(found)])
            else:
                out.append([" ".join(t for t in (next(found)[0].text for _ in ps) if t)])
        return out

    def bridge(self, request: DecodeRequest, calls: Calls) -> Callable:
        """The documents layer's `translate(sentences)`, called on a worker thread: the
        sentences go through the batcher on the event loop (`calls`), and back with
        alignments."""

        def translate(sentences: list[str]) -> list[tuple[str, list | None]]:
            sentences = list(sentences)
            self.check_sentences(sentences)
            if not sentences:
                return []
            results = calls.result(self.batcher.translate(sentences, request))
            bests = [hyps[0] for hyps in results]
            return [(best.text, _pairs(getattr(best, "alignment", None))) for best in bests]

        return translate

    async def document(self, data: bytes, name: str, fmt: str, src, tgt) -> bytes:
        """A file's bytes translated, off the event loop: plain text here, sentence by
        sentence; the other formats by the documents layer (translator.documents)."""
        if fmt == "text":
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as err:
                raise LimitError(400, f"{name}: not UTF-8 text (offset {err.start})") from None
            out, _ = await self.plain([text], src, tgt, 0)
            return out[0].encode("utf-8")
        most = UNZIPPED * self.limits.max_body
        if fmt == "docx" and (size := unzipped_size(data)) > most:
            raise LimitError(400, f"{name}: {size} bytes once unzipped, over this server's "
                             f"limit of {most} ({UNZIPPED} times --max-body)")  # fmt: skip
        calls = Calls(asyncio.get_running_loop())
        translate = self.bridge(self.request(src, tgt, align=True), calls)
        try:  # (an install without a format's module, or its library, lacks that format)
            from translator.documents import translate_bytes

            return await asyncio.to_thread(
                translate_bytes, data, Path(name), fmt, translate, src.code, tgt.model
            )
        except ImportError as err:
            raise LimitError(
                400, f"{fmt} format is not supported by this server ({err.name} is missing)"
            ) from None
        except RecursionError:  # markup nested thousands deep: the client's to simplify
            raise LimitError(400, f"{name}: the {fmt} markup is nested too deeply") from None
        finally:  # (cancelled: given up, so the worker thread stops at its next call)
            calls.give_up()

    async def html(self, texts: list[str], src, tgt) -> list[str]:
        """The texts of a format=html request, one after another: a request holds one place
        in the queue at a time."""
        return [(await self.document(t.encode("utf-8"), "q.html", "html", src, tgt)).decode()
                for t in texts]  # fmt: skip

    async def in_time(self, answer: Awaitable):
        """`answer` awaited within the server's --timeout, all of it (splitting, every
        call to the batcher, a file's documents layer), else the 503 of a busy server."""
        try:
            return await asyncio.wait_for(answer, self.limits.timeout)
        except asyncio.TimeoutError:
            raise self.limits.busy() from None

    # -- the routes ---------------------------------------------------------------------------

    async def translate(self, request: Request):
        fields, _ = await read_fields(request)
        self.check_key(fields)
        texts, batch = texts_of(fields, self.limits.max_texts)
        source, target = required(fields, "source"), required(fields, "target")
        fmt = fields.get("format") or "text"
        if fmt not in ("text", "html"):
            raise LimitError(400, f"{fmt} format is not supported (text or html)")
        alternatives = alternatives_of(fields, self.limits.max_beam - 1)
        src, auto = self.langs.source(source)
        tgt = self.langs.target(src, target)
        if fmt == "text":
            out, alts = await self.in_time(self.plain(texts, src, tgt, alternatives))
        else:
            out, alts = await self.in_time(self.html(texts, src, tgt)), [[] for _ in texts]
        answer: dict = {"translatedText": out if batch else out[0]}
        if auto:  # the model's one source language (Languages.source): nothing is detected
            found = {"confidence": 100.0, "language": src.code}
            answer["detectedLanguage"] = [found] * len(texts) if batch else found
        if alternatives:
            answer["alternatives"] = alts if batch else alts[0]
        return JSONResponse(answer)

    async def languages(self, request: Request):
        return JSONResponse(self.langs.listing())

    async def translate_file(self, request: Request):
        fields, files = await read_fields(request)
        self.check_key(fields)
        if "file" not in files:
            raise LimitError(400, "Invalid request: missing file parameter")
        source, target = required(fields, "source"), required(fields, "target")
        name, data = files["file"]
        if not name or not data:
            raise LimitError(400, "Invalid request: empty file")
        suffix = Path(name).suffix.lower()
        if suffix not in FILE_FORMATS:
            listed = ", ".join(FILE_FORMATS)
            raise LimitError(400, f"Invalid request: file format not supported: {name!r} "
                             f"(give one of {listed})")  # fmt: skip
        src, _ = self.langs.source(source)
        tgt = self.langs.target(src, target)
        out = await self.in_time(self.document(data, name, FILE_FORMATS[suffix], src, tgt))
        saved = self.files.save(name, out)
        # quoted: a space in a URL is refused by some clients (Python's urllib among them)
        url = f"{str(request.base_url).rstrip('/')}{PREFIX}/download_file/{quote(saved)}"
        return JSONResponse({"translatedFileUrl": url})

    async def download_file(self, request: Request):
        name = request.path_params["name"]
        path = self.files.path(name)
        if path is None:
            raise LimitError(404, "no such file: it was never made here or is gone")
        shown = name.split(".", 1)[1]
        kind = mimetypes.guess_type(shown)[0] or "application/octet-stream"
        return FileResponse(path, media_type=kind, filename=shown)

    async def detect(self, request: Request):
        fields, _ = await read_fields(request)
        self.check_key(fields)
        texts_of(fields, self.limits.max_texts)  # (checked as /translate checks it)
        # one source language, or a 400 saying so (/detect has no source field to fill)
        lang = self.langs.only_source(
            "/detect", "it names the language only for a model of one: name the source to "
            "/translate instead"
        )  # fmt: skip
        return JSONResponse([{"confidence": 100.0, "language": lang.code}])

    async def settings(self, request: Request):
        source, target = self.langs.defaults(self.door.tgt_lang)  # (None: auto)
        return JSONResponse({
            "charLimit": self.limits.max_chars,
            "frontendTimeout": 500,  # LibreTranslate's: ms its page waits after typing
            "apiKeys": self.api_key is not None,
            "keyRequired": self.api_key is not None,
            "suggestions": False,
            "filesTranslation": True,
            "supportedFilesFormat": list(FILE_FORMATS),
            "language": {
                "source": {"code": "auto" if source is None else source.code,
                           "name": "Auto Detect" if source is None else source.name},
                "target": {"code": target.code, "name": target.name},
            },
        })  # fmt: skip

    async def health(self, request: Request):
        return JSONResponse({"status": "ok"})

    async def suggest(self, request: Request):
        # LibreTranslate's answer where suggestions are off, which its clients know how to read
        raise LimitError(403, "Suggestions are disabled on this server.")


def mount(
    app: FastAPI, engine, door, batcher, api_key: str | None = None, off_loop=None
) -> LibreTranslate:
    """LibreTranslate's routes under /libretranslate/ on `app`, and their CORS and
    doubled-slash door (libretranslate_io.Door); `off_loop`: the server's OffLoop."""
    lt = LibreTranslate(engine, door, batcher, api_key, off_loop)
    routes = [
        ("/translate", lt.translate, ["POST"]),
        ("/languages", lt.languages, ["GET"]),
        ("/translate_file", lt.translate_file, ["POST"]),
        ("/download_file/{name}", lt.download_file, ["GET"]),
        ("/detect", lt.detect, ["POST"]),
        ("/frontend/settings", lt.settings, ["GET"]),
        ("/health", lt.health, ["GET"]),
    ]
    for path, handler, methods in routes:
        name = re.sub(r"\W", "_", f"libretranslate{path}")
        app.add_api_route(PREFIX + path, answered(handler), methods=methods, name=name,
                          tags=["libretranslate"], openapi_extra=OPENAPI.get(path))  # fmt: skip
    # POST /languages as LibreTranslate's clients send it, the GET's twin in the schema
    app.add_api_route(PREFIX + "/languages", answered(lt.languages), methods=["POST"],
                      include_in_schema=False)  # fmt: skip
    # a refusal whatever the body, so nothing for the schema to describe
    app.add_api_route(PREFIX + "/suggest", answered(lt.suggest), methods=["POST"],
                      include_in_schema=False)  # fmt: skip
    app.add_middleware(Door)
    app.state.libretranslate = lt
    return lt
