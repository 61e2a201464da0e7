"""The `translator serve` command (cli.py registers it). Imports nothing heavy at module
level, so `translator --help` stays fast and works without the `serve` extra."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from translator.serve.limits import Limits

D = Limits()


def serve(
    checkpoint: Annotated[
        Path, typer.Option("--checkpoint", help="A checkpoint file or an exported folder")
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8000,
    device: Annotated[str, typer.Option("--device", help="auto, cpu, cuda or mps")] = "auto",
    max_body: Annotated[int, typer.Option(min=1, help="Bytes per request body")] = D.max_body,
    max_texts: Annotated[int, typer.Option(min=1, help="Texts per request")] = D.max_texts,
    max_chars: Annotated[int, typer.Option(min=1, help="Characters per text")] = D.max_chars,
    max_queue: Annotated[int, typer.Option(min=1, help="Requests queued at once")] = D.max_queue,
    timeout: Annotated[
        float, typer.Option(min=0.001, help="Seconds a request may wait for its answer")
    ] = D.timeout,
    max_beam: Annotated[
        int, typer.Option(min=1, help="Largest beam a request may ask")
    ] = D.max_beam,
    batch_size: Annotated[
        int, typer.Option(min=1, help="Sentences decoded together at most")
    ] = D.batch_size,
    batch_wait_ms: Annotated[
        float, typer.Option(min=0, help="Milliseconds a request waits for others to join it")
    ] = D.batch_wait_ms,
    batch_gap_ms: Annotated[
        float, typer.Option(min=0, help="... stopping once none has come for this long")
    ] = D.batch_gap_ms,
    batching: Annotated[
        str,
        typer.Option(
            help="batch: decode gathered requests together to the end; continuous: sentences "
            "join the running search between its steps (a PyTorch model)"
        ),
    ] = D.batching,
):
    """Serve translations over HTTP (POST /translate, POST /attention, GET /health) and a
    page at / that shows them with the attention; concurrent requests are decoded together."""
    from translator.engines import open_translator
    from translator.errors import optional_import

    optional_import("fastapi", "serve", "translator serve and its page")
    uvicorn = optional_import("uvicorn", "serve", "translator serve and its page")
    from translator.serve.app import create_app
    from translator.serve.batching import Batcher

    if batching not in ("batch", "continuous"):
        from translator.errors import UserError

        raise UserError(f"--batching {batching!r}: choose batch or continuous")
    limits = Limits(
        max_body=max_body,
        max_texts=max_texts,
        max_chars=max_chars,
        max_queue=max_queue,
        timeout=timeout,
        max_beam=max_beam,
        batch_size=batch_size,
        batch_wait_ms=batch_wait_ms,
        batch_gap_ms=batch_gap_ms,
        batching=batching,
    )
    translator = open_translator(checkpoint, device)
    batcher = Batcher.of(translator, limits)
    app = create_app(translator, str(checkpoint), limits, batcher)
    # asyncio's own event loop, even where uvloop is installed: with uvloop's, continuous
    # batching at 64 clients decoded 22 to 37 sentences/s against 56 to 63 with asyncio's
    # (p99 5 to 8 s against 2 s), and whole batches gained nothing from it (bench_serve.py)
    config = uvicorn.Config(
        app, host=host, port=port, loop="asyncio", log_level="info", access_log=False
    )
    server = uvicorn.Server(config)
    logging.getLogger("translator").info(
        "serving %s on http://%s:%d/ (Ctrl-C ends)", checkpoint, host, port
    )
    _decode_here_serve_there(server, batcher)
    if not server.started:  # uvicorn has logged why
        from translator.errors import UserError

        raise UserError(f"could not serve on {host}:{port} (see the messages above)")


def _decode_here_serve_there(server, batcher) -> None:
    """Run the decoding loop on this, the main, thread and uvicorn on a thread of its own,
    until SIGINT or SIGTERM has stopped the server (after it answered the requests in
    flight) or it failed to start.

    Why this way round: the model was loaded on the main thread, and PyTorch's OpenMP
    threads (libgomp) then belong to it. Decoding on a second thread gives that thread a
    second set, and once a process has more OpenMP threads than cores, libgomp lets its idle
    ones spin only briefly before they sleep, so every parallel operation waits for a
    wake-up: the same batches decoded about a fifth slower on a second thread than on the
    main one (2 cores). The event loop runs no torch operation, so it adds no such set."""
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
