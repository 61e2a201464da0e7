"""What one request may ask of the server, and how long it may wait. Every breach is
answered with a one-line JSON error (413, 429 or 503), never by dropping the connection."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    max_body: int = 1_000_000  # bytes of one request body (413)
    max_texts: int = 256  # sentences in one request (413)
    max_chars: int = 2_000  # characters of one sentence (413)
    # terms of one request's glossary (413): matching them compiles one regular expression,
    # whose compiler holds the GIL for tens of ms at a few thousand terms (the event loop waits)
    max_terms: int = 1_000
    max_queue: int = 256  # requests waiting or being decoded; one more gets 429
    timeout: float = 30.0  # seconds a request may wait for its answer (503)
    max_beam: int = 16  # largest beam (or n-best) a request may ask for (422)
    batch_size: int = 64  # sentences decoded together at most (a bigger request: in such batches)
    batch_wait_ms: float = 50.0  # how long the first request waits at most for others to join it
    batch_gap_ms: float = 3.0  # ... and it stops waiting once none has come for this long
    batching: str = "batch"  # "continuous": sentences join a running search between steps

    def busy(self) -> LimitError:
        """The 503 of a request whose answer did not come within `timeout`."""
        return LimitError(503, f"no answer within {self.timeout:g} s (the server is busy)")


class LimitError(Exception):
    """A request over a limit; `status` is the HTTP status it is answered with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message
