"""What the LibreTranslate routes share below the routes themselves: reading a request's
fields however a client sends them, the errors in LibreTranslate's shape, the CORS and
doubled-slash door in front of the app, and the folder of translated files."""

from __future__ import annotations

import asyncio
import io
import json
import re
import secrets
import tempfile
import threading
import unicodedata
import urllib.parse
import zipfile
from collections import OrderedDict
from pathlib import Path

from fastapi import Request
from fastapi.responses import JSONResponse

from translator.errors import one_line
from translator.serve.limits import LimitError
from translator.serve.requests import check_unicode

PREFIX = "/libretranslate"
# parts of one multipart form: a client sends a few fields and a file, or `q` once per text
# (--max-texts' default); more would only keep a worker thread parsing for seconds
MAX_PARTS = 256 + 16
# how many times --max-body a docx may unzip to: its XML packs 5 to 20 times, and python-docx
# holds every element of it in memory (~200 bytes each), so a zip bomb of a few kB would
# otherwise cost gigabytes and minutes
UNZIPPED = 16

# our statuses as LibreTranslate answers them: it reports every bad field and every text
# over a limit as 400; 429 keeps LibreTranslate's "Slowdown:" wording
STATUS = {413: 400, 422: 400}


def lt_error(status: int, message: str) -> JSONResponse:
    status = STATUS.get(status, status)
    text = one_line(message)
    if status == 429 and not text.startswith("Slowdown"):
        text = f"Slowdown: {text}"
    return JSONResponse({"error": text}, status_code=status)


async def read_fields(request: Request) -> tuple[dict, dict]:
    """(fields, files) of a request: its query parameters, then its body's JSON object,
    form fields or multipart parts (files: name -> (file name, bytes)). A field given
    several times in a form, either kind, is a list (`q`)."""
    fields: dict = _form(request.url.query, "the query")
    body = await request.body()
    kind = request.headers.get("content-type", "")
    try:  # a multipart form off the event loop: the standard library's MIME parser is slow
        if "multipart/form-data" in kind.lower():  # (~0.5 ms a part)
            more, files = await asyncio.to_thread(_body_fields, kind, body)
        else:
            more, files = _body_fields(kind, body)
    except RecursionError:  # JSON arrays or MIME parts nested thousands deep
        raise LimitError(400, "Invalid request: the body is nested too deeply") from None
    fields.update(more)
    return fields, files


def texts_of(fields: dict, max_texts: int) -> tuple[list[str], bool]:
    """(the texts of `q`, whether it was a list), as /translate and /detect take it: a
    string or a list of strings, each encodable, at most `max_texts`; else a 400 in
    LibreTranslate's words."""
    q = fields.get("q")
    if q is None or q == "" or q == []:
        raise LimitError(400, "Invalid request: missing q parameter")
    batch = isinstance(q, list)
    texts = q if batch else [q]
    if not all(isinstance(t, str) for t in texts):
        raise LimitError(400, "Invalid request: q must be a string or a list of strings")
    check_unicode(q, "q")  # (a string's error names q, a list's q.N)
    if len(texts) > max_texts:
        raise LimitError(400, f"Invalid request: request ({len(texts)}) exceeds text "
                         f"limit ({max_texts})")  # fmt: skip
    return texts, batch


def _body_fields(content_type: str, body: bytes) -> tuple[dict, dict]:
    fields: dict = {}
    files: dict = {}
    kind = content_type.lower()
    if "multipart/form-data" in kind:
        fields, files = _multipart(content_type, body)
    elif "json" in kind or body.lstrip().startswith(b"{"):
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise LimitError(400, "Invalid JSON format") from None
        if not isinstance(data, dict):
            raise LimitError(400, "Invalid JSON format: send an object of fields")
        fields.update(data)
    elif body:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise LimitError(400, "the form is not UTF-8") from None
        fields.update(_form(text, "the form"))
    return fields, files


def _form(text: str, what: str) -> dict:
    """The fields of a URL-encoded form or query; a %-escape that is not UTF-8 is a 400,
    as a body's byte is (parse_qsl would put U+FFFD in its place)."""
    try:
        pairs = urllib.parse.parse_qsl(text, keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        raise LimitError(400, f"{what} is not UTF-8 (a %-escape)") from None
    return _pairs(pairs)


def unzipped_size(data: bytes) -> int:
    """The bytes a zip archive's members unpack to, as it declares them (zipfile reads no
    more: a member that holds more fails its CRC check); 0 for what is no zip."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return 0


def _pairs(pairs: list[tuple[str, str]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            out[key] = [*(out[key] if isinstance(out[key], list) else [out[key]]), value]
        else:
            out[key] = value
    return out


def _multipart(content_type: str, body: bytes) -> tuple[dict, dict]:
    """The fields and files of a multipart/form-data body, read by the standard library's
    MIME parser (which keeps a part's bytes exactly)."""
    from email.parser import BytesParser
    from email.policy import HTTP

    boundary = _boundary(content_type)
    if boundary and body.count(b"--" + boundary) > MAX_PARTS + 1:  # (+1: the closing one)
        raise LimitError(400, f"Invalid request: a form of more than {MAX_PARTS} parts")
    head = b"Content-Type: " + content_type.encode("latin-1", "replace") + b"\r\n\r\n"
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    if not message.is_multipart():
        raise LimitError(400, "the multipart body cannot be read")
    pairs: list[tuple[str, str]] = []
    files: dict = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        payload = part.get_payload(decode=True) or b""
        filename = part.get_filename()
        if filename is not None:  # the first of a name, as Flask's request.files gives it
            files.setdefault(name, (filename, payload))
        else:
            pairs.append((name, _text(payload, part.get_content_charset(), name)))
    return _pairs(pairs), files


def _boundary(content_type: str) -> bytes | None:
    from email.message import Message

    head = Message()
    head["Content-Type"] = content_type
    boundary = head.get_boundary()
    return boundary.encode("latin-1", "replace") if boundary else None


def _text(payload: bytes, charset: str | None, name: str) -> str:
    """A form field's text in its declared charset (one Python does not know: the form's
    own, UTF-8); bytes that are not of it are a 400, as in the other kinds of body."""
    try:
        return payload.decode(charset or "utf-8")
    except LookupError:
        return _text(payload, None, name)
    except UnicodeDecodeError:
        raise LimitError(
            400, f"the form's field {name!r} is not {(charset or 'utf-8').upper()}"
        ) from None


def cors(path: str) -> list[tuple[bytes, bytes]]:
    """The CORS headers every answer to `path` carries: for LibreTranslate's routes alone,
    any origin (the server's own routes stay closed to other origins)."""
    path = re.sub("/{2,}", "/", path)
    if path == PREFIX or path.startswith(PREFIX + "/"):
        return [(b"access-control-allow-origin", b"*")]
    return []


class Door:
    """ASGI middleware in front of the app, for the LibreTranslate routes alone: a doubled
    slash in the path resolves (`/libretranslate//translate`, as clients that join a base
    URL ending in / and a path beginning with one send it), a browser's CORS preflight is
    answered, and every answer allows any origin."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = re.sub("/{2,}", "/", scope["path"])
        if not (path == PREFIX or path.startswith(PREFIX + "/")):
            return await self.app(scope, receive, send)
        scope = {**scope, "path": path, "raw_path": path.encode()}
        if scope["method"] == "OPTIONS":
            return await self._preflight(scope, send)

        async def send_cors(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", [])) + cors(path)
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, send_cors)

    async def _preflight(self, scope, send) -> None:
        asked = dict(scope.get("headers") or []).get(b"access-control-request-headers")
        headers = [
            (b"access-control-allow-origin", b"*"),
            (b"access-control-allow-methods", b"GET, POST, OPTIONS"),
            (b"access-control-allow-headers", asked or b"Content-Type"),
            (b"access-control-max-age", b"86400"),
            (b"content-length", b"0"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


class FileStore:
    """The translated files waiting to be downloaded, in a temporary folder of this server
    (removed when the process ends), under names no client can guess; at most `keep`,
    the oldest removed first."""

    NAME = re.compile(r"^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_. -]{1,120}$")

    def __init__(self, keep: int = 256):
        self.keep = keep
        self._folder: tempfile.TemporaryDirectory | None = None
        self._names: OrderedDict[str, None] = OrderedDict()

    @property
    def folder(self) -> Path:
        if self._folder is None:  # made on the first file: most servers never get one
            self._folder = tempfile.TemporaryDirectory(prefix="translator-files-")
        return Path(self._folder.name)

    def save(self, filename: str, data: bytes) -> str:
        """The name the file is downloaded by: a random part, then `filename`'s base name,
        its accents dropped (Über.docx: Uber.docx) and what else is not ASCII an `_`."""
        base = unicodedata.normalize("NFKD", Path(filename.replace("\\", "/")).name)
        base = "".join(c for c in base if not unicodedata.combining(c))
        base = re.sub(r"[^A-Za-z0-9_. -]", "_", base)
        base = base.lstrip(".")[-120:] or "file"
        name = f"{secrets.token_urlsafe(16)}.{base}"
        path = self.folder / name
        partial = path.with_name(name + ".part")
        partial.write_bytes(data)
        partial.replace(path)  # a download never sees half a file
        self._names[name] = None
        while len(self._names) > self.keep:
            old, _ = self._names.popitem(last=False)
            (self.folder / old).unlink(missing_ok=True)
        return name

    def path(self, name: str) -> Path | None:
        """The file saved under `name`, or None (any other name, a path among them)."""
        if not self.NAME.match(name) or name not in self._names:
            return None
        path = self.folder / name
        return path if path.is_file() else None

    def close(self) -> None:
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None


def _body(kind: str, required: list[str], **fields) -> dict:
    schema = {"type": "object", "required": required, "properties": fields}
    return {"requestBody": {"required": True, "content": {kind: {"schema": schema}}}}


_TEXT = {"type": "string"}
_Q = {"oneOf": [_TEXT, {"type": "array", "items": _TEXT}], "description": "Text(s)"}
# What the OpenAPI schema shows of each route's request (the routes read their fields and
# path themselves: read_fields), so that /docs and schema-driven clients and tests know it.
OPENAPI = {
    "/translate": _body(
        "application/json", ["q", "source", "target"], q=_Q,
        source={**_TEXT, "description": "A language code, or auto"}, target=_TEXT,
        format={"type": "string", "enum": ["text", "html"]},
        alternatives={"type": "integer", "minimum": 0, "maximum": 15}, api_key=_TEXT,
    ),
    "/translate_file": _body(
        "multipart/form-data", ["file", "source", "target"],
        file={"type": "string", "format": "binary"}, source=_TEXT, target=_TEXT, api_key=_TEXT,
    ),
    "/detect": _body("application/json", ["q"], q=_Q, api_key=_TEXT),
    "/download_file/{name}": {"parameters": [{
        "name": "name", "in": "path", "required": True, "schema": _TEXT,
        "description": "The file's name in translate_file's translatedFileUrl",
    }]},
}  # fmt: skip


class Calls:
    """The batcher calls the documents layer makes for one request, from its worker thread:
    given up together (`give_up`) when the request is (its time is up, its client left),
    so the call in flight is dropped by the decoder and the thread stops at its next."""

    def __init__(self, loop):
        self.loop, self.gone, self.flying = loop, False, set()
        self.lock = threading.Lock()

    def result(self, coroutine):
        """The coroutine's result, run on the event loop; a 503 once given up."""
        with self.lock:
            if self.gone:
                coroutine.close()
                raise LimitError(503, "the request was given up")
            future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
            self.flying.add(future)
        try:
            return future.result()
        finally:
            with self.lock:
                self.flying.discard(future)

    def give_up(self) -> None:
        with self.lock:
            self.gone = True
            for future in self.flying:
                future.cancel()
