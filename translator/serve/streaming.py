"""Continuous batching: sentences join the running beam search between its steps.

A batch that is decoded from start to end runs as long as its longest sentence needs, and
the requests that arrive meanwhile wait for all of it. Here the decoding loop keeps one
`BeamStream` (translator/decode/beam.py) per beam size: at every step the sentences of newly
queued requests join (taking the rows of sentences that ended), every sentence advances by
one token, and each request is answered as soon as its last sentence has ended. Requests are
gathered as in batcher.py only while the decoder is idle; while it is busy, whatever is
queued joins at the next step. A stream is given only as many sentences as it has free
rows, one from each waiting request in turn, so a request of many sentences shares the rows
with those that come after it rather than holding them all until its last sentence has
joined. The streams are the engine's own (`Engine.stream`), for an
engine whose capabilities include streaming (PyTorch models whose family has
StreamingStates); any other decodes whole batches (batcher.Batcher).
"""

from __future__ import annotations

import logging
from collections import deque

from translator.decode.calibrate import confidence_request, with_confidence
from translator.decode.request import DecodeRequest
from translator.decode.translator import Translation
from translator.errors import UserError
from translator.serve.batcher import Batcher, Job
from translator.serve.limits import Limits

log = logging.getLogger(__name__)


class StreamBatcher(Batcher):
    def __init__(self, translator, limits):
        super().__init__(translator, limits)
        self.streams: dict = {}  # the engine's streams, by beam size
        self._answers: dict[Job, list] = {}  # each request's translations so far
        # each request's sentences not yet given to a stream, the requests in turn order
        self._backlog: dict[Job, deque[int]] = {}

    def _busy(self) -> bool:
        return bool(self._backlog) or any(len(stream) for stream in self.streams.values())

    def _run(self) -> None:
        stopping = False
        while (taken := self._take(self._busy(), stopping)) is not None:
            jobs, calls, stop = taken
            stopping = stopping or stop
            with self._guard(jobs + calls):
                for job in jobs:
                    try:
                        self._add(job)
                    except Exception as err:  # that request's input: the loop goes on
                        self._answers.pop(job, None)
                        self._failed(job, err)
                for job in calls:
                    self._answer(job, job.fn)
                self._feed()
            for beam, stream in list(self.streams.items()):
                if len(stream):
                    self._step(beam, stream)

    def _stream(self, request: DecodeRequest):
        beam = request.decode.beam
        if beam not in self.streams:
            self.streams[beam] = self.translator.stream(
                request,
                self.limits.batch_size,
                cancelled=lambda owner: owner[0].abandoned,
                nbest_of=lambda owner: kept(owner[0].request),
            )
        return self.streams[beam]

    def _add(self, job: Job) -> None:
        """Queue the sentences of a request for `_feed`; blank ones are answered as given."""
        if job.abandoned:
            self._finish(job, None, None)
            return
        request = job.request
        if request.phrases is not None and any(request.phrases):  # that search is no stream
            self._decode([job])
            return
        self._answers[job] = [[Translation("", 0.0)] * request.nbest for _ in job.texts]
        self.sentences += len(job.texts)
        job.left = len(job.texts)
        if job.left:
            self._backlog[job] = deque(range(len(job.texts)))
        else:
            self._done(job, self._answers.pop(job))

    def _feed(self) -> None:
        """Fill each stream's free rows from the backlog: one sentence from each request
        waiting for that beam size, in turn, until the rows or the sentences run out."""
        for job in [job for job in self._backlog if job.abandoned]:
            del self._backlog[job]
            self._answers.pop(job, None)
            self._finish(job, None, None)
        by_beam: dict[int, list[Job]] = {}
        for job in self._backlog:
            by_beam.setdefault(job.request.decode.beam, []).append(job)
        for jobs in by_beam.values():
            stream = self._stream(jobs[0].request)
            room = self.limits.batch_size - len(stream)
            share = dict.fromkeys(jobs, 0)
            while room > 0 and any(share[job] < len(self._backlog[job]) for job in jobs):
                for job in jobs:
                    if room > 0 and share[job] < len(self._backlog[job]):
                        share[job] += 1
                        room -= 1
            for job, n in share.items():
                if n:
                    self._give(job, stream, n)

    def _give(self, job: Job, stream, n: int) -> None:
        """The next `n` sentences of `job` join `stream`; the job goes to the back of the
        turn order, or leaves the backlog when none is left."""
        backlog = self._backlog.pop(job)
        rows = [backlog.popleft() for _ in range(n)]
        if backlog:
            self._backlog[job] = backlog
        request = job.request
        part = request.replace(guides=request.guides and request.guides.of(rows))
        # each request's own source prefix (its target language): sentences of several
        # languages share one stream, the tag being part of each one's source
        try:
            todo = stream.add([job.texts[r] for r in rows], [(job, r) for r in rows], part)
        except Exception as err:  # that request's input: the loop goes on
            self._backlog.pop(job, None)
            self._answers.pop(job, None)
            self._failed(job, err)
            return
        job.left -= n - len(todo)  # blank sentences are answered as they are
        if job.left == 0:
            self._done(job, self._answers.pop(job))

    def _step(self, beam: int, stream) -> None:
        advanced = stream.advanced
        try:
            ended = stream.step()
        except Exception:
            # The stream is lost; each of its requests is decoded again on its own, in whole
            # batches, so that one whose input broke the step fails alone.
            log.exception("a decoding step of beam %d failed; its requests are decoded alone", beam)
            del self.streams[beam]
            jobs = {owner[0] for owner in stream.owners()}
            for job in [job for job in jobs if self._answers.pop(job, None) is not None]:
                self._backlog.pop(job, None)
                self._decode([job])
            return
        self.batches += 1
        self.batch_sentences += stream.advanced - advanced
        for (job, i), translations in ended:
            answers = self._answers.get(job)
            if answers is None:  # answered already (its client left)
                continue
            answers[i] = translations
            job.left -= 1
            if job.left == 0:
                del self._answers[job]
                self._done(job, answers)
        for job in [job for job in self._answers if job.abandoned]:  # the stream drops the rest
            del self._answers[job]
            self._finish(job, None, None)

    def _done(self, job: Job, answers: list) -> None:
        """Answer `job`; where it asked for confidence, each text's kept hypotheses (the
        whole beam, `kept`) judged as Translator.translate judges them, then its n-best."""
        request = job.request
        if request.confidence:
            try:
                answers = with_confidence(self.translator, job.texts, answers, request)
            except Exception as err:  # that request's answer only: the stream goes on
                self._failed(job, err)
                return
        self._finish(job, answers, None)


def kept(request: DecodeRequest) -> int:
    """The hypotheses a stream keeps of each sentence: the request's n-best, or the whole
    beam where it asks for confidence (the n-best's agreement is one of its features)."""
    return (confidence_request(request) if request.confidence else request).nbest


def make_batcher(translator, limits: Limits) -> Batcher:
    """Continuous batching when asked for, where the engine declares it can (a PyTorch
    model whose family has StreamingStates, models/base.py); else whole batches
    (batcher.Batcher)."""
    if limits.batching == "batch":
        return Batcher(translator, limits)
    if not translator.capabilities.streaming:
        raise UserError(
            "--batching continuous needs a checkpoint (PyTorch) model whose family lets "
            "sentences join a running search; use --batching batch"
        )
    return StreamBatcher(translator, limits)
