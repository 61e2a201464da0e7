"""Reliability under load: many clients for minutes against `translator serve`, mixing good
requests with bad ones, every good answer checked against the translation `translate
--input` gives, and the server's memory sampled.

    python scripts/bench/load_serve.py --checkpoint runs/load/best.pt \
        --source ../shared/data/multi30k/test_2016_flickr.de.gz --clients 64 --seconds 300

The reference translations come first, in this process, the way `translate --input` makes
them (one call over all sentences, the checkpoint's decode settings, which the server gives a
request that names no beam). Then the server runs as a subprocess on a free 127.0.0.1 port and
each client, on its own kept-alive connection, sends requests until `--seconds` have passed:
a good one (one test sentence, or two to four in `texts`) or, with probability `--bad-share`,
one of the BAD kinds below, each of which must be a 4xx with a one-line {"error": ...}. The
server's resident memory (VmRSS) is read every second; `rss_growth` compares the end with
the first reading after `--warmup` seconds. One JSON line on stdout, also appended to
--output; the server is stopped by its process id at the end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from translator.data.corpus import read_lines
from translator.engines.load import load_engine

# Requests the server must refuse with a 4xx, each a kind of mistake (s: a test sentence).
BAD = {
    "lone_surrogate": lambda s: {"text": s[:5] + "\ud800" + s[5:]},
    "surrogate_in_texts": lambda s: {"texts": [s, "\udfff"]},
    "surrogate_in_terms": lambda s: {"text": s, "terms": {"Hund": "\ud800"}},
    "wrong_type": lambda s: {"text": 5},
    "texts_not_a_list": lambda s: {"texts": s},
    "beam_as_text": lambda s: {"text": s, "beam": "5"},
    "huge_beam": lambda s: {"text": s, "beam": 10**12},
    "huge_nbest": lambda s: {"text": s, "nbest": 10**6},
    "empty_object": lambda s: {},
    "unknown_field": lambda s: {"text": s, "speed": 1},
    "unknown_tgt_lang": lambda s: {"text": s, "tgt_lang": "xx"},
    "prefixes_count": lambda s: {"texts": [s, s], "prefixes": ["A"]},
    "prefix_and_prefixes": lambda s: {"texts": [s], "prefix": "A", "prefixes": ["A"]},
    "blank_constraint": lambda s: {"text": s, "constraints": [" "], "beam": 2},
    "constraints_over_beam": lambda s: {"text": s, "constraints": ["a", "b", "c"], "beam": 2},
    "glossary_over_limit": lambda s: {"text": s, "terms": {f"w{i}": "x" for i in range(1001)}},
    "not_json": lambda s: b"{not json",
    "not_utf8": lambda s: b'{"text": "\xff\xfe"}',
    "too_many_texts": lambda s: {"texts": [s] * 300},
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(args, port: int) -> subprocess.Popen:
    env = {**os.environ, **({"OMP_NUM_THREADS": str(args.threads)} if args.threads else {})}
    command = [sys.executable, "-m", "translator", "serve", "--checkpoint", args.checkpoint]
    command += ["--port", str(port), "--batching", args.batching, "--device", args.device]
    Path(args.server_log).parent.mkdir(parents=True, exist_ok=True)
    log = open(args.server_log, "wb")  # noqa: SIM115 (the server writes to it until stopped)
    proc = subprocess.Popen(command, env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the server exited; see {args.server_log}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.2)
    stop(proc)
    sys.exit("the server did not answer /health within 120 s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)


def rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def post(conn: http.client.HTTPConnection, body) -> tuple[int, object]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.request("POST", "/translate", raw, {"Content-Type": "application/json"})
    res = conn.getresponse()
    data = res.read()
    try:
        return res.status, json.loads(data)
    except ValueError:
        return res.status, data.decode(errors="replace")


def client(port, sentences, refs, args, seed, until, counts, lock, waits) -> None:
    """Requests until `until` (and at most --max-requests), tallied into `counts`; each good
    request's seconds from sending to its answer go into `waits`."""
    rng, mine, mine_waits = random.Random(seed), Counter(), []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for _ in range(args.max_requests):
        if time.monotonic() >= until:
            break
        picks = rng.sample(range(len(sentences)), rng.choice([1, 1, 1, 2, 4]))
        bad = rng.random() < args.bad_share
        kind = rng.choice(sorted(BAD)) if bad else "good"
        if bad:
            body = BAD[kind](sentences[picks[0]])
        elif len(picks) == 1:
            body = {"text": sentences[picks[0]]}
        else:
            body = {"texts": [sentences[i] for i in picks]}
        sent = time.monotonic()
        try:
            status, answer = post(conn, body)
        except (OSError, http.client.HTTPException):
            mine["transport_errors"] += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            continue
        mine["requests"] += 1
        mine["5xx"] += status >= 500
        if not bad:
            mine_waits.append(time.monotonic() - sent)
        if bad:
            shaped = isinstance(answer, dict) and set(answer) == {"error"}
            ok = 400 <= status < 500 and shaped and "\n" not in answer["error"]
            mine["bad_refused" if ok else f"bad_not_refused:{kind}:{status}"] += 1
        elif status != 200:
            mine[f"good_failed:{status}"] += 1
        elif answer["translations"] == [refs[i] for i in picks]:
            mine["good_identical"] += 1
        else:
            mine["good_different"] += 1
    conn.close()
    with lock:
        counts.update(mine)
        waits.extend(mine_waits)


def latencies(waits: list[float]) -> dict:
    """Percentiles of the good requests' seconds to their answers."""
    if not waits:
        return {}
    ranked = sorted(waits)
    at = lambda q: round(ranked[min(len(ranked) - 1, int(q * len(ranked)))], 3)  # noqa: E731
    return {"good_p50_s": at(0.5), "good_p99_s": at(0.99), "good_max_s": round(ranked[-1], 3)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--source", default="../shared/data/multi30k/test_2016_flickr.de.gz")
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--seconds", type=float, default=300.0)
    p.add_argument("--warmup", type=float, default=60.0, help="seconds before the RSS baseline")
    p.add_argument("--bad-share", type=float, default=0.3)
    p.add_argument("--max-requests", type=int, default=1_000_000, help="per client")
    p.add_argument("--batching", default="continuous", choices=["batch", "continuous"])
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=None, help="OMP_NUM_THREADS of the server")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--server-log", default="runs/load_serve_server.log")
    p.add_argument("--output", default="results/load_serve.jsonl")
    args = p.parse_args()
    if not 0 < args.warmup < args.seconds:
        sys.exit("--warmup must be above 0 and below --seconds")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)

    sentences = [s for s in read_lines(args.source) if s.strip()]
    engine = load_engine(args.checkpoint, args.device)
    start = time.perf_counter()
    refs = [hyps[0].text for hyps in engine.translate(sentences)]
    print(f"{len(refs)} references in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    del engine

    port = free_port()
    proc = start_server(args, port)
    counts, lock, samples, waits = Counter(), threading.Lock(), [], []
    try:
        began = time.monotonic()
        until = began + args.seconds
        threads = [
            threading.Thread(
                target=client,
                args=(
                    port,
                    sentences,
                    refs,
                    args,
                    args.seed * 1000 + i,
                    until,
                    counts,
                    lock,
                    waits,
                ),
            )
            for i in range(args.clients)
        ]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            samples.append((time.monotonic() - began, rss_mib(proc.pid)))
            time.sleep(1.0)
        for t in threads:
            t.join()
        samples.append((time.monotonic() - began, rss_mib(proc.pid)))
        alive = proc.poll() is None
    finally:
        stop(proc)
    after_warmup = next(rss for at, rss in samples if at >= args.warmup)
    end = samples[-1][1]
    row = {
        "checkpoint": args.checkpoint,
        "batching": args.batching,
        "clients": args.clients,
        "seconds": args.seconds,
        "bad_share": args.bad_share,
        **dict(sorted(counts.items())),
        "server_alive_at_end": alive,
        "rss_mib_after_warmup": round(after_warmup, 1),
        "rss_mib_end": round(end, 1),
        "rss_mib_max": round(max(rss for _, rss in samples if rss is not None), 1),
        "rss_growth": round(end / after_warmup - 1, 4),
        **latencies(waits),
        "warmup_s": args.warmup,
        "date": time.strftime("%Y-%m-%d"),
    }
    line = json.dumps(row)
    print(line)
    with open(args.output, "a", encoding="utf-8") as out:
        out.write(line + "\n")


if __name__ == "__main__":
    main()
