"""Serving speed: requests/s, sentences/s and p50/p99 latency of `translator serve` under 1,
8 and 64 concurrent clients, beside `translate --input`'s sentences/s on the same sentences.

    python scripts/bench/bench_serve.py --checkpoint runs/multi30k_transformer/best.pt \
        --source ../shared/data/multi30k/test_2016_flickr.de.gz

First the sentences are translated in this process the way `translate --input` does it
(one call over the whole list, batches of decode.batch_size): the reference outputs and
rate; the rate is timed again after the server rows (the machine's pace drifts), and each
row's `share_of_translate_input` is its sentences/s over the mean of both. Then the server
runs as a subprocess on a free loopback port, and for each client count the same sentences
are sent one per request (`--requests` of them, cycled through the file), each client
sending its next request on its own kept-alive connection as soon as the last is answered.
`mean_batch` is the sentences per batch the server decoded (/health): per search with
`--batching batch`, per step with `--batching continuous`.
Every row says which share of answers is identical to the reference output. One JSON line
per row on stdout, also appended to --output. Both sides use the same thread count.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from translator.data.corpus import read_lines
from translator.engines.load import load_engine
from translator.runtime import set_threads


class Client:
    """One kept-alive connection to the server, as an HTTP client library's session keeps."""

    def __init__(self, port: int, timeout: float = 600):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def call(self, path: str, body: dict | None = None) -> dict:
        """GET `path`, or POST `body` to it as JSON; the answer's JSON (HTTP 200 only)."""
        if body is None:
            self.conn.request("GET", path)
        else:
            headers = {"Content-Type": "application/json"}
            self.conn.request("POST", path, json.dumps(body), headers)
        res = self.conn.getresponse()
        answer = json.loads(res.read())
        if res.status != 200:
            raise RuntimeError(f"{path}: HTTP {res.status}: {answer}")
        return answer

    def close(self) -> None:
        self.conn.close()


def once(port: int, path: str, body: dict | None = None) -> dict:
    """One call on a connection of its own (an idle kept-alive connection would be closed
    by the server after its keep-alive timeout, a few seconds)."""
    client = Client(port)
    try:
        return client.call(path, body)
    finally:
        client.close()


def start_server(args, port: int) -> subprocess.Popen:
    env = {**os.environ, **({"OMP_NUM_THREADS": str(args.threads)} if args.threads else {})}
    command = [sys.executable, "-m", "translator", "serve", "--checkpoint", args.checkpoint]
    command += ["--port", str(port), "--device", args.device, "--max-queue", "100000"]
    command += ["--batch-size", str(args.batch_size), "--batch-wait-ms", str(args.batch_wait_ms)]
    command += ["--batch-gap-ms", str(args.batch_gap_ms), "--batching", args.batching]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the server exited: {proc.stderr.read().decode(errors='replace')}")
        client = Client(port, timeout=5)
        try:
            client.call("/health")
            return proc
        except OSError:
            time.sleep(0.1)
        finally:
            client.close()
    proc.kill()
    sys.exit("the server did not answer /health within 120 s")


def load(port: int, sentences: list[str], clients: int, beam: int):
    """(seconds, latencies, answers) of sending every sentence once from `clients` threads,
    each on its own kept-alive connection."""
    answers: list[str | None] = [None] * len(sentences)
    latencies: list[float] = []
    lock, cursor = threading.Lock(), iter(range(len(sentences)))

    def client():
        connection = Client(port)
        while True:
            with lock:
                i = next(cursor, None)
            if i is None:
                connection.close()
                return
            start = time.perf_counter()
            answer = connection.call("/translate", {"text": sentences[i], "beam": beam})
            answers[i] = answer["translations"][0]
            with lock:
                latencies.append(time.perf_counter() - start)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, latencies, answers


def percentile(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[q - 1]
        if len(values) > 1
        else values[0]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--source", default="../shared/data/multi30k/test_2016_flickr.de.gz")
    ap.add_argument("--requests", type=int, default=1000, help="requests per client count")
    ap.add_argument("--clients", type=int, action="append", help="default 1, 8 and 64")
    ap.add_argument("--beam", type=int, help="default: the model's")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--batch-wait-ms", type=float, default=50.0)
    ap.add_argument("--batch-gap-ms", type=float, default=3.0)
    ap.add_argument("--batching", default="batch", choices=["batch", "continuous"])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--output", default="results/bench_serve.jsonl")
    args = ap.parse_args()
    set_threads(args.threads)

    lines = [line for line in read_lines(args.source) if line.strip()]
    sentences = [lines[i % len(lines)] for i in range(args.requests)]
    translator = load_engine(args.checkpoint, args.device)
    beam = args.beam or translator.cfg.decode.beam
    dc = translator.cfg.decode.replace(beam=beam, batch_size=args.batch_size)

    def offline() -> tuple[list[str], float]:
        start = time.perf_counter()
        texts = [r[0].text for r in translator.translate(sentences, translator.request(decode=dc))]
        return texts, len(sentences) / (time.perf_counter() - start)

    reference, offline_before = offline()

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = start_server(args, port)
    rows = []
    try:
        once(port, "/translate", {"text": sentences[0], "beam": beam})  # warm-up
        for clients in args.clients or [1, 8, 64]:
            before = once(port, "/health")
            seconds, latencies, answers = load(port, sentences, clients, beam)
            after = once(port, "/health")
            batches = after["batches"] - before["batches"]
            same = sum(a == b for a, b in zip(answers, reference)) / len(sentences)
            rows.append(
                {
                    "checkpoint": args.checkpoint,
                    "source": args.source,
                    "beam": beam,
                    "clients": clients,
                    "requests": len(sentences),
                    "requests_per_s": round(len(sentences) / seconds, 1),
                    "sentences_per_s": round(len(sentences) / seconds, 1),
                    "p50_ms": round(1000 * percentile(latencies, 50), 1),
                    "p99_ms": round(1000 * percentile(latencies, 99), 1),
                    "identical_to_translate": round(same, 4),
                    "mean_batch": round(
                        (after["batch_sentences"] - before["batch_sentences"]) / batches, 1
                    ),
                    "batch_size": args.batch_size,
                    "batch_wait_ms": args.batch_wait_ms,
                    "batch_gap_ms": args.batch_gap_ms,
                    "batching": args.batching,
                    "threads": args.threads or os.cpu_count(),
                }
            )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    # the machine's pace drifts: translate --input is timed before and after the server
    # rows, and each row is compared with the mean of both
    _, offline_after = offline()
    mean = (offline_before + offline_after) / 2
    for row in rows:
        row["translate_input_sentences_per_s"] = round(mean, 1)
        row["translate_input_before_after"] = [round(offline_before, 1), round(offline_after, 1)]
        row["share_of_translate_input"] = round(row["sentences_per_s"] / mean, 3)
        print(json.dumps(row), flush=True)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "a", encoding="utf-8") as out:
        out.writelines(json.dumps(row) + "\n" for row in rows)


if __name__ == "__main__":
    main()
