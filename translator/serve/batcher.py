"""Requests queued and decoded together by one decoding loop.

The event loop only queues work and awaits answers; all torch work runs in the decoding
loop, one batch at a time, so the event loop stays free to accept requests while a batch
decodes. `translator serve` runs the decoding loop on the process's main thread and the
event loop on a thread of its own (commands/serve.py says why).

The decoding loop takes the first waiting request and lets others join it until
`batch_size` sentences are gathered, `batch_wait_ms` have passed, or none has come for
`batch_gap_ms`; then it makes one `translate` call per (decoding settings, n-best, source
prefix) among them, the requests' target prefixes and phrases joined in one DecodeRequest,
and hands each request exactly its own slice of the results. A group too big for one call
is decoded a call at a time, taking turns with the groups that arrive meanwhile, so one
big request delays a small one by a call, not by all of its own.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from translator.decode.guide import Guides
from translator.decode.loop import Abandoned, abandon_when
from translator.decode.request import DecodeRequest
from translator.errors import UserError
from translator.serve.limits import LimitError, Limits

log = logging.getLogger(__name__)
# batches a translate call of a request of many sentences holds at most (batcher decoding):
# between two calls, sentences whose client left are dropped
CHUNKS = 2
# and the work it holds at most, in source characters times beam width: CHUNKS batches of
# 150-character sentences at beam 5, so that a call of long sentences at a wide beam (a
# batch of them can take a minute) holds fewer of them
CHUNK_WORK = 150 * 5


def _chunks(order: list[int], lines: list[str], beam: int, most: int) -> list[list[int]]:
    """The rows `order` (sorted by length) cut into translate calls of at most `most`
    sentences and most * CHUNK_WORK characters times `beam`."""
    budget, out, work = most * CHUNK_WORK, [[]], 0
    for r in order:
        cost = max(len(lines[r]), 1) * beam
        if out[-1] and (len(out[-1]) >= most or work + cost > budget):
            out.append([])
            work = 0
        out[-1].append(r)
        work += cost
    return out


@dataclass(eq=False)
class Job:
    texts: list[str] = field(default_factory=list)
    request: DecodeRequest | None = None  # how to decode the texts (serve/parse.py)
    fn: Callable[[], Any] | None = None  # other work (the attention of one sentence)
    loop: asyncio.AbstractEventLoop | None = None
    future: asyncio.Future | None = None
    abandoned: bool = False  # its client timed out or left: nothing to decode for it
    finished: bool = False  # answered (or dropped): the decoding loop is done with it
    left: int = 0  # sentences not yet decoded (streaming.py)

    @property
    def key(self) -> tuple:
        """Jobs of equal keys share a translate call: the same settings, n-best, source and
        alignments and confidence or not."""
        r = self.request
        settings = tuple(sorted(r.decode.to_dict().items()))
        return (settings, r.nbest, r.source, r.alignments, r.confidence)


@dataclass(eq=False)
class Work:
    """A group of jobs decoded together, and its translate calls still to make: the rows of
    `lines` (each owned by a job of `group`) that each call takes."""

    group: list[Job]
    lines: list[str]
    owners: list[Job]
    request: DecodeRequest
    calls: deque[list[int]]
    results: list


class Batcher:
    def __init__(self, translator, limits: Limits):
        self.translator, self.limits = translator, limits
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._lock = threading.Lock()
        self.pending = 0  # requests accepted and not yet answered
        self.sentences = 0  # sentences asked for
        self.batches = 0  # batches the decoder ran (a translate call, or a step of a stream)
        self.batch_sentences = 0  # and the sentences in them, all together

    def run(self) -> None:
        """Decode on the calling thread until `stop`."""
        self._run()

    def stop(self) -> None:
        """Let `run` decode what is queued, then return."""
        self._jobs.put(None)

    async def translate(
        self, texts: list[str], request: DecodeRequest, timeout: float | None = None
    ):
        """One list of Translation (n-best) per text, in order, decoded as `request` asks;
        `timeout`: seconds it may wait (None: the limit's)."""
        return await self._submit(Job(texts=texts, request=request), timeout)

    async def call(self, fn: Callable[[], Any], timeout: float | None = None):
        """fn() run by the decoding loop, between batches."""
        return await self._submit(Job(fn=fn), timeout)

    async def _submit(self, job: Job, timeout: float | None = None):
        job.loop = asyncio.get_running_loop()
        job.future = job.loop.create_future()
        with self._lock:
            if self.pending >= self.limits.max_queue:
                raise LimitError(
                    429, f"the queue is full ({self.limits.max_queue} requests); try again soon"
                )
            self.pending += 1
        self._jobs.put(job)
        try:
            wait = self.limits.timeout if timeout is None else max(timeout, 0.0)
            return await asyncio.wait_for(asyncio.shield(job.future), wait)
        except asyncio.TimeoutError:
            job.abandoned = True
            raise self.limits.busy() from None
        except asyncio.CancelledError:
            job.abandoned = True
            raise

    # -- the decoding loop -------------------------------------------------------------------

    def _run(self) -> None:
        turns: deque[Work] = deque()  # groups with translate calls still to make
        stopping = False
        while (taken := self._take(bool(turns), stopping)) is not None:
            jobs, calls, stop = taken
            stopping = stopping or stop
            with self._guard(jobs + calls):
                turns.extend(self._plan(jobs))
                for job in calls:
                    self._answer(job, job.fn)
            if turns:
                work = turns.popleft()
                with self._guard(work.group):
                    turns.extend(self._advance(work))

    def _take(self, busy: bool, stopping: bool) -> tuple[list[Job], list[Job], bool] | None:
        """What to handle next (_gather): while `busy`, what is queued, without waiting;
        else the next request and those that join it; None when the loop is to end."""
        if busy:
            return self._gather(None, wait=False)
        first = None if stopping else self._jobs.get()
        return None if first is None else self._gather(first)

    @contextmanager
    def _guard(self, jobs: list[Job]) -> Iterator[None]:
        """Whatever escapes the handling of `jobs` (a bug) fails those not yet answered with
        a 500, and the decoding loop goes on with the next requests."""
        try:
            yield
        except Exception as err:
            log.exception("the decoding loop failed on %d requests", len(jobs))
            for job in jobs:
                if not job.finished:
                    self._finish(job, None, err)

    def _gather(self, first: Job | None, wait: bool = True) -> tuple[list[Job], list[Job], bool]:
        """(jobs to translate, calls to run, whether to stop) from `first` and the jobs that
        join it: until the deadline, or until none has come for a gap (many clients fill a
        batch, a lone one is not kept waiting); without `wait`, only those already queued."""
        jobs: list[Job] = []
        calls: list[Job] = []
        if first is not None:
            (calls if first.fn else jobs).append(first)
        last = time.monotonic()
        deadline = last + self.limits.batch_wait_ms / 1000
        gap = self.limits.batch_gap_ms / 1000
        size = sum(len(job.texts) for job in jobs)
        while not calls and size < self.limits.batch_size:
            left = min(deadline, last + gap) - time.monotonic() if wait else 0
            try:
                job = self._jobs.get(timeout=left) if left > 0 else self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is None:  # stop: what was gathered is still answered
                return jobs, calls, True
            (calls if job.fn else jobs).append(job)
            size += len(job.texts)
            last = time.monotonic()
        return jobs, calls, False

    def _live(self, jobs: list[Job]) -> list[Job]:
        """`jobs` less those whose client has timed out or left, which are dropped here."""
        for job in jobs:
            if job.abandoned:
                self._finish(job, None, None)
        return [job for job in jobs if not job.abandoned and not job.finished]

    def _decode(self, jobs: list[Job]) -> None:
        """Answer `jobs`, their groups' calls taking turns, before anything else."""
        turns = deque(self._plan(jobs))
        while turns:
            turns.extend(self._advance(turns.popleft()))

    def _plan(self, jobs: list[Job]) -> list[Work]:
        """`jobs` in groups that share translate calls (Job.key), each with its calls: one,
        or where it holds more than CHUNKS batches or CHUNK_WORK, calls of that much of
        similar lengths."""
        groups: dict[tuple, list[Job]] = {}
        for job in jobs:
            groups.setdefault(job.key, []).append(job)
        return [self._work(group) for group in groups.values()]

    def _work(self, group: list[Job]) -> Work:
        lines = [text for job in group for text in job.texts]
        first = group[0].request
        guides = Guides.joined([(len(job.texts), job.request.guides) for job in group])
        dc = first.decode.replace(batch_size=self.limits.batch_size)
        order = sorted(range(len(lines)), key=lambda r: len(lines[r]))
        chunks = _chunks(order, lines, dc.beam, CHUNKS * self.limits.batch_size)
        return Work(
            group=group,
            lines=lines,
            owners=[job for job in group for _ in job.texts],
            request=first.replace(decode=dc, guides=guides),
            calls=deque(chunks if len(chunks) > 1 else [list(range(len(lines)))]),
            results=[None] * len(lines),
        )

    def _advance(self, work: Work) -> list[Work]:
        """Make `work`'s next translate call, dropping the sentences of jobs whose client
        has left (a big request given up on stops taking the decoder); the work left to do
        after it. A failed call is made again for each of its jobs alone, so that one
        request's input fails only that request."""
        group = self._live(work.group)  # the calls before took time: some may have left
        if not group:
            return []
        rows = [r for r in work.calls.popleft() if not work.owners[r].abandoned]
        try:
            if rows:
                guides = work.request.guides
                part = work.request.replace(guides=guides and guides.of(rows))
                found = self._translate([work.lines[r] for r in rows], part,
                                        {work.owners[r] for r in rows})  # fmt: skip
                for r, translations in zip(rows, found or [None] * len(rows), strict=True):
                    work.results[r] = translations
        except Exception as err:
            if len(group) == 1:
                self._failed(group[0], err)
                return []
            return [self._work([job]) for job in group]
        if work.calls:
            return [work]
        self._settle(work)
        return []

    def _settle(self, work: Work) -> None:
        """Answer each job of `work`, its calls all made, with its own slice of the results."""
        self.batches += 1
        self.sentences += len(work.lines)
        self.batch_sentences += len(work.lines)
        start = 0
        for job in work.group:
            answer = None if job.abandoned else work.results[start : start + len(job.texts)]
            self._finish(job, answer, None)
            start += len(job.texts)

    def _translate(self, lines: list[str], request: DecodeRequest, callers) -> list | None:
        """The translator's answer to `lines`, or None where every job of `callers` was
        given up on while they decoded (the search stops at its next step)."""
        try:
            with abandon_when(lambda: all(job.abandoned for job in callers)):
                return self.translator.translate(lines, request)
        except Abandoned:
            return None

    def _failed(self, job: Job, err: Exception) -> None:
        """Answer `job` with `err`: a UserError is the client's (400); anything else is a bug,
        logged and answered 500."""
        if not isinstance(err, UserError):
            log.error("decoding a request of %d sentences failed", len(job.texts), exc_info=err)
        self._finish(job, None, err)

    def _answer(self, job: Job, fn: Callable[[], Any]) -> None:
        if job.abandoned:
            self._finish(job, None, None)
            return
        try:
            result = fn()
        except Exception as err:
            self._failed(job, err)
            return
        self._finish(job, result, None)

    def _finish(self, job: Job, result, error: BaseException | None) -> None:
        if job.finished:
            return
        job.finished = True
        with self._lock:
            self.pending -= 1
        if job.abandoned:
            return

        def settle() -> None:
            if job.future.done():
                return
            if error is None:
                job.future.set_result(result)
            else:
                job.future.set_exception(error)

        try:
            job.loop.call_soon_threadsafe(settle)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass
