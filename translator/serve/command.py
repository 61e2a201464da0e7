"""The `translator serve` command (cli.py registers it). Imports nothing heavy at module
level, so `translator --help` stays fast and works without the `serve` extra."""

from __future__ import annotations

import contextlib
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
    app = create_app(translator, str(checkpoint), limits)
    config = uvicorn.Config(app, host=host, port=port, log_level="info", access_log=False)
    server = _server_class(uvicorn)(config)
    logging.getLogger("translator").info(
        "serving %s on http://%s:%d/ (Ctrl-C ends)", checkpoint, host, port
    )
    try:
        server.run()
    except SystemExit:  # uvicorn's way to fail at start-up, e.g. the port is taken
        pass
    if not server.started:  # uvicorn has logged why
        from translator.errors import UserError

        raise UserError(f"could not serve on {host}:{port} (see the messages above)")


def _server_class(uvicorn):
    class Server(uvicorn.Server):
        """uvicorn's server, except that after a graceful stop on SIGINT or SIGTERM it
        returns (so the command exits 0) instead of raising the signal again."""

        @contextlib.contextmanager
        def capture_signals(self):
            with super().capture_signals():
                try:
                    yield
                finally:
                    getattr(self, "_captured_signals", []).clear()

    return Server
