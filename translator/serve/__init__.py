"""`translator serve`: an HTTP translation service (FastAPI + uvicorn, the `serve` extra)
that decodes concurrent requests together, and one static page that draws the attention.

    command.py   the typer command (registered by cli.py); imports nothing heavy
    limits.py    the limits a request must keep, and their defaults
    batcher.py   the queue and the one decoding loop (whole batches)
    streaming.py continuous batching on the beam stream, and the choice between the two
    app.py       the FastAPI app: routes, errors as one-line JSON, the body-size guard
    requests.py  the request models, the Unicode check, the worker thread for CPU work
    libretranslate*.py  LibreTranslate's API under /libretranslate/ (docs/libretranslate.md)
    static/      index.html, the page served at /
"""
