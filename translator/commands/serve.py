"""The `translator serve` command (cli.py registers it). Imports nothing heavy at module
level, so `translator --help` stays fast and works without the `serve` extra."""

from __future__ import annotations

import gc
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from translator.cli_options import (
    DeviceOpt,
    LenPenaltyOpt,
    MaxLenAOpt,
    MaxLenBOpt,
    TagOpt,
    checkpoint_option,
    decode_overrides,
    number_option,
)
from translator.config.ranges import BATCH_SIZE, BEAM
from translator.serve.limits import Limits

D = Limits()


CheckpointOpt = Annotated[list[Path], checkpoint_option("A checkpoint file or an exported folder")]
HostOpt = Annotated[str, typer.Option("--host", metavar="ADDRESS", help="Address to listen on")]
PortOpt = Annotated[int, number_option("--port", "PORT", "Port to listen on", (0, 65535))]
ServeLangOpt = Annotated[
    str | None,
    typer.Option(
        "--tgt-lang",
        metavar="LANG",
        help="Target language of the requests that name none (a model of several "
        "target languages); without it each request names its own",
    ),
]
BeamOpt = Annotated[
    int | None,
    number_option(
        "--beam", "N", "Beam of the requests that name none (default: decode.beam)", BEAM
    ),
]
BatchSizeOpt = Annotated[
    int | None,
    number_option(
        "--batch-size",
        "N",
        "Sentences it gathers from concurrent requests into one batch at most "
        "(default: decode.batch_size)",
        BATCH_SIZE,
    ),
]
MaxBeamOpt = Annotated[
    int,
    number_option(
        "--max-beam", "N", "Largest beam (or n-best) a request may ask; at least --beam", BEAM
    ),
]
MaxBodyOpt = Annotated[
    int, number_option("--max-body", "BYTES", "Bytes per request body", (1, 2**31 - 1))
]
MaxTextsOpt = Annotated[int, number_option("--max-texts", "N", "Texts per request", (1, 100_000))]
MaxCharsOpt = Annotated[
    int, number_option("--max-chars", "N", "Characters per text", (1, 1_000_000))
]
MaxTermsOpt = Annotated[
    int, number_option("--max-terms", "N", "Terms of a request's glossary", (1, 100_000))
]
MaxQueueOpt = Annotated[
    int, number_option("--max-queue", "N", "Requests queued at once", (1, 100_000))
]
TimeoutOpt = Annotated[
    float,
    number_option(
        "--timeout", "SECONDS", "Seconds a request may wait for its answer", (0.001, 86_400.0)
    ),
]
BatchWaitOpt = Annotated[
    float,
    number_option(
        "--batch-wait-ms", "MS", "Milliseconds a request waits for others to join it",
        (0.0, 60_000.0),
    ),
]  # fmt: skip
BatchGapOpt = Annotated[
    float,
    number_option(
        "--batch-gap-ms", "MS", "... stopping once none has come for this long", (0.0, 60_000.0)
    ),
]
ApiKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        metavar="KEY",
        envvar="TRANSLATOR_API_KEY",
        show_envvar=False,
        help="The api_key requests to /libretranslate/ must give (else 403); also read "
        "from TRANSLATOR_API_KEY, which keeps it out of the process list",
    ),
]
BatchingOpt = Annotated[
    str,
    typer.Option(
        metavar="MODE",
        help="batch: decode gathered requests together to the end; continuous: sentences "
        "join the running search between its steps (a PyTorch model)",
    ),
]


def serve(
    checkpoint: CheckpointOpt,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8000,
    tag: TagOpt = None,
    tgt_lang: ServeLangOpt = None,
    device: DeviceOpt = "auto",
    beam: BeamOpt = None,
    len_penalty: LenPenaltyOpt = None,
    max_len_a: MaxLenAOpt = None,
    max_len_b: MaxLenBOpt = None,
    batch_size: BatchSizeOpt = None,
    max_beam: MaxBeamOpt = D.max_beam,
    max_body: MaxBodyOpt = D.max_body,
    max_texts: MaxTextsOpt = D.max_texts,
    max_chars: MaxCharsOpt = D.max_chars,
    max_terms: MaxTermsOpt = D.max_terms,
    max_queue: MaxQueueOpt = D.max_queue,
    timeout: TimeoutOpt = D.timeout,
    batch_wait_ms: BatchWaitOpt = D.batch_wait_ms,
    batch_gap_ms: BatchGapOpt = D.batch_gap_ms,
    batching: BatchingOpt = D.batching,
    api_key: ApiKeyOpt = None,
):
    """Serve translations over HTTP, and a page that shows them with the attention.

    POST /translate, POST /attention, POST /score, GET /health, the page at /, and
    LibreTranslate's API under /libretranslate/ (docs/libretranslate.md); concurrent
    requests are decoded together. The decoding options set what a request gets
    unless it asks for its own beam; a request to a model of several target languages names
    its own (tgt_lang) unless --tgt-lang gives the one it gets."""
    from translator.errors import UserError, optional_import

    optional_import("fastapi", "serve", "translator serve and its page")
    optional_import("uvicorn", "serve", "translator serve and its page")
    if len(checkpoint) != 1:  # (one model a server: ensembles are translate's and eval's)
        raise UserError(f"{len(checkpoint)} --checkpoint options: serve takes one model")
    checkpoint = checkpoint[0]
    if batching not in ("batch", "continuous"):
        raise UserError(f"--batching {batching!r}: choose batch or continuous")
    if api_key is not None and not api_key.strip():
        raise UserError("--api-key is empty: give the key requests must send")
    if beam is not None and beam > max_beam:  # (the model's own beam is checked as it loads)
        raise UserError(f"--beam {beam} is over --max-beam {max_beam}")
    if port:  # a port in use is named before a model loads (0: the system picks one later)
        _check_port(host, port)
    from translator.engines.load import load_engine  # (torch: after the quick checks)

    translator = load_engine(checkpoint, device, tag=tag, tgt_lang=tgt_lang, any_language=True)
    dc = decode_overrides(
        translator.cfg.decode, beam, len_penalty, max_len_a, max_len_b, batch_size
    )
    if dc.beam > max_beam:
        raise UserError(
            f"the beam of requests that name none, {dc.beam} (--beam or the model's "
            f"decode.beam), is over --max-beam {max_beam}"
        )
    limits = Limits(
        max_body=max_body,
        max_texts=max_texts,
        max_chars=max_chars,
        max_terms=max_terms,
        max_queue=max_queue,
        timeout=timeout,
        max_beam=max_beam,
        batch_size=dc.batch_size,
        batch_wait_ms=batch_wait_ms,
        batch_gap_ms=batch_gap_ms,
        batching=batching,
    )
    _run_server(translator, str(checkpoint), limits, dc, tag, tgt_lang, host, port, api_key)


def _run_server(
    translator, path: str, limits, dc, tag, tgt_lang, host: str, port: int, api_key=None
) -> None:
    """Serve `translator` with `limits`, requests that name none getting the decoding
    settings `dc`, until SIGINT or SIGTERM."""
    import uvicorn

    from translator.errors import UserError
    from translator.serve.app import create_app
    from translator.serve.parse import Door
    from translator.serve.streaming import make_batcher

    batcher = make_batcher(translator, limits)
    door = Door(translator, limits, dc, tag=tag, tgt_lang=tgt_lang)
    app = create_app(translator, path, limits, batcher, door, api_key)
    port = _check_port(host, port)
    # asyncio's own event loop even where uvloop is installed: continuous batching is
    # slower under uvloop's and whole batches gain nothing from it
    config = uvicorn.Config(
        app, host=host, port=port, loop="asyncio", log_level="info", access_log=False
    )
    server = uvicorn.Server(config)
    logging.getLogger("translator").info(
        "serving %s on http://%s:%d/ (Ctrl-C ends)", path, host, port
    )
    # What is loaded now lives as long as the server: a full garbage collection (which
    # holds the GIL, so the event loop waits) then scans only what requests create
    gc.collect()
    gc.freeze()
    # The event loop gives up the GIL at every socket call and, while a worker parses a
    # large request, waits one switch interval to get it back (docs/benchmarks.md)
    sys.setswitchinterval(0.001)
    _decode_here_serve_there(server, batcher)
    if not server.started:  # uvicorn has logged why
        raise UserError(f"could not serve on {host}:{port} (see the messages above)")


def _check_port(host: str, port: int) -> int:
    """The port to serve on: `port`, or for 0 one the system has free. A port in use, found
    before uvicorn starts, is one line (uvicorn logs its start-up around the error);
    uvicorn then binds the port itself."""
    import socket

    from translator.errors import UserError

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except OSError as err:
        raise UserError(f"--host {host}: {err.strerror or err}") from None
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as err:
            raise UserError(
                f"cannot serve on {host}:{port}: {err.strerror}",
                "give another --port, or stop what listens there",
            ) from None
        return probe.getsockname()[1]


def _decode_here_serve_there(server, batcher) -> None:
    """Run the decoding loop on this, the main, thread and uvicorn on a thread of its own,
    until SIGINT or SIGTERM has stopped the server (after it answered the requests in
    flight) or it failed to start.

    Decoding stays on the thread that loaded the model, which owns PyTorch's OpenMP
    threads: a second thread would bring a second set, more threads than cores, and libgomp
    then puts idle threads to sleep sooner, so every parallel operation waits to wake one."""
    import signal
    import threading

    def http() -> None:
        try:
            server.run()
        except SystemExit:  # uvicorn's way to fail at start-up, e.g. the port is taken
            pass
        finally:
            batcher.stop()  # the requests in flight are answered: end the decoding loop

    # Off the main thread uvicorn listens for no signal: these handlers ask it to stop
    # (a second Ctrl-C stops it without waiting for the requests in flight).
    handled = (signal.SIGINT, signal.SIGTERM)
    before = {sig: signal.signal(sig, server.handle_exit) for sig in handled}
    thread = threading.Thread(target=http, name="translator-http")
    try:
        thread.start()
        try:
            batcher.run()
        finally:
            server.should_exit = True  # the decoding loop ended first only after a bug
            thread.join()
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
