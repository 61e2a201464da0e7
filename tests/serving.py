"""What the server tests share: a small model to serve, `translator serve` as a subprocess
on a free loopback port, and HTTP requests whose errors are answers too."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from util import tiny_config

from translator.config import config_from_dict
from translator.train.trainer import Trainer

SENTENCES = [
    "Ein Hund läuft.",
    "Die alte Frau liest ein Buch.",
    "Am dritten März schläft der Mann.",
    "Zwei Katzen spielen im Garten.",
    "Das Kind trinkt Wasser.",
    "",
    "Drei kleine Hunde laufen schnell über die Straße.",
    "Ein Mann",
]


def train(root, **model) -> str:
    cfg = tiny_config(
        run_dir=str(root),
        seed=5,
        data={"demo_train": 400},
        model={"d_model": 48, "ff_dim": 96, **model},
        train={"max_steps": 80, "batch_tokens": 1000, "lr": 0.005, "warmup_steps": 20},
        decode={"beam": 2, "max_len_a": 1.5, "max_len_b": 5},
    )
    Trainer(config_from_dict(cfg)).run()
    return str(root / "best.pt")


class Server:
    """`python -m translator serve` on a free loopback port, ready once /health answers."""

    def __init__(self, checkpoint: str, log_path, *options: str):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
        # stop() kills the server outright, so its temporary folders go beside its log
        env.setdefault("TMPDIR", str(Path(log_path).parent))
        args = ["serve", "--checkpoint", checkpoint, "--port", str(self.port), *options]
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "translator", *args], stdout=log, stderr=log, env=env
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"server exited: {self.log()}"
            try:
                if get(self.url + "/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)  # not listening yet
        self.stop()
        raise AssertionError(f"server not up in 60 s: {self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


def request(method: str, url: str, body: bytes | None = None, content_type="application/json"):
    """(status, parsed JSON or text, raw body) of one HTTP request; errors are answers too."""
    req = urllib.request.Request(url, data=body, method=method)
    if body is not None:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            status, raw, kind = res.status, res.read(), res.headers.get("content-type", "")
    except urllib.error.HTTPError as err:
        status, raw, kind = err.code, err.read(), err.headers.get("content-type", "")
    return status, json.loads(raw) if "json" in kind else raw.decode(), raw


def get(url: str):
    return request("GET", url)


def post(url: str, obj):
    return request("POST", url, json.dumps(obj).encode())


def with_batcher(translator, coroutine, **limits):
    """coroutine(batcher) run with the batcher's decoding loop on a thread of its own."""
    import asyncio
    import threading

    from translator.serve.batcher import Batcher
    from translator.serve.limits import Limits

    batcher = Batcher(translator, Limits(**{"max_queue": 1000, **limits}))
    decoder = threading.Thread(target=batcher.run)
    decoder.start()
    try:
        return asyncio.run(coroutine(batcher))
    finally:
        batcher.stop()
        decoder.join()


def req(beam: int = 1, nbest: int = 1, source=None, decode=None):
    """A DecodeRequest of this beam and n-best (on `decode`, default settings otherwise)."""
    from translator.config import DecodeConfig
    from translator.decode.request import DecodeRequest

    return DecodeRequest((decode or DecodeConfig()).replace(beam=beam), nbest, source=source)


def expected(translator, texts, beam, nbest=1):
    """What the translator itself gives `texts` at this beam: what the server must answer."""
    return translator.translate(texts, req(beam, nbest, decode=translator.cfg.decode))


def assert_error(answer, status: int, *words: str):
    """An answer of `status` whose body is one line of JSON, {"error": ...} holding `words`."""
    code, body, raw = answer
    assert code == status, (code, raw)
    assert isinstance(body, dict) and set(body) == {"error"}, raw
    assert b"\n" not in raw.strip() and "Traceback" not in body["error"], raw
    for word in words:
        assert word in body["error"], (word, body)


def concurrently(n: int, work) -> list:
    """work(i) for i in range(n), each on its own thread, all released at once."""
    barrier, out = threading.Barrier(n), [None] * n

    def run(i):
        barrier.wait()
        out[i] = work(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return out


@contextmanager
def app_client(engine, path, dc, batching: str = "batch", **limits):
    """A TestClient of the app that serves `engine` (checkpoint `path`, decoding `dc`,
    `batching` as serve's --batching, other `limits` as serve's options), its decoding loop
    running in a thread until the block ends."""
    from fastapi.testclient import TestClient

    from translator.serve.app import create_app
    from translator.serve.limits import Limits
    from translator.serve.parse import Door
    from translator.serve.streaming import make_batcher

    limits = Limits(batch_size=dc.batch_size, batching=batching, **limits)
    batcher = make_batcher(engine, limits)
    app = create_app(engine, str(path), limits, batcher, Door(engine, limits, dc)).app
    decoder = threading.Thread(target=batcher.run)
    decoder.start()
    try:
        with TestClient(app) as client:
            yield client
    finally:
        batcher.stop()
        decoder.join()


class PageStub:
    """The real page served by a tiny app on a free loopback port, in a thread: /health
    answers a stub model and /translate is `translate` (an async handler of the request's
    JSON body), so a page test knows what the page was answered."""

    def __init__(self, translate):
        from importlib import resources

        import uvicorn
        from fastapi import FastAPI
        from fastapi.responses import HTMLResponse, JSONResponse

        app = FastAPI()
        page = resources.files("translator.serve").joinpath("static/index.html").read_text()
        app.get("/", response_class=HTMLResponse)(lambda: page)
        app.get("/health")(lambda: {"family": "stub", "engine": "stub", "device": "cpu",
                                    "beam": 2, "languages": ["de", "en"]})  # fmt: skip
        app.post("/translate")(translate)
        app.post("/attention")(lambda: JSONResponse({"error": "no attention"}, 400))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
