"""Lines in, Translations out in input order: the length-sorted batches every engine
decodes a list of lines in (decode/translator.py, engines/ct2.py)."""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from translator.data.user_text import blank, valid
from translator.decode.loop import abandoned, stop_if
from translator.decode.request import DecodeRequest
from translator.decode.rules import cut
from translator.progress import progress_bar


@dataclass
class Translation:
    text: str
    score: float
    tokens: tuple[int, ...] = ()  # target subword ids, without <bos>/<eos>
    # (source word, translated word) pairs, where the request asked for alignments
    alignment: tuple[tuple[int, int], ...] | None = None
    # each token's log-probability and the </s>'s, where the engine keeps them
    logprobs: tuple[float, ...] | None = None
    # where the request asked: predicted chrF / 100 (decode/calibrate.py), and each word's
    confidence: float | None = None
    word_confidence: tuple[float, ...] | None = None


def source_ids(
    tokenizer, lines: list[str], limit: int, prefix=()
) -> tuple[list[int], list[list[int]]]:
    """(indices of the lines that show something (user_text.blank), their source subword
    ids, after `prefix`: a corpus tag's id); a source longer than `limit` subwords is cut
    (with a warning). A lone surrogate is a UserError naming the line."""
    todo = [i for i, line in enumerate(lines) if not blank(line)]
    for i in todo:
        valid(lines[i], f"line {i + 1}")
    ids = tokenizer.encode_src([lines[i] for i in todo]) if todo else []
    if prefix:
        ids = [[*prefix, *s] for s in ids]
    return todo, cut(ids, limit, todo, framing=1 + len(prefix))


def in_batches(
    tokenizer,
    lines,
    limit: int,
    request: DecodeRequest,
    source: tuple[int, ...],
    progress,
    run_batch,
    workers: int = 1,
):
    """Translate `lines` in length-sorted batches of the request's batch size with
    `run_batch(ids, request of those lines)`, after the ids `source`; results come back in
    input order. A blank line yields an empty translation without running the model; a
    source longer than `limit` subwords is cut (with a warning). With `workers` > 1, that
    many batches run at once on threads (for an engine that releases the GIL, such as
    CTranslate2), and input that would make fewer batches is split so that every worker
    gets one. A request for alignments also hands `run_batch` the batch's source texts
    (`sources=`), whose words the alignments count. A `progress` with `recall` and `keep`
    (decode/journal.py) gives batches finished before and keeps each new one."""
    nbest = request.nbest
    results: list[list[Translation]] = [[Translation("", 0.0)] * nbest for _ in lines]
    todo, ids = source_ids(tokenizer, lines, limit, source)
    outer = None if isinstance(progress, bool) else progress  # a caller's bar of lines
    recall = getattr(outer, "recall", None)
    if outer is not None:
        outer.update(len(lines) - len(todo))  # blank lines are done at once
    if not todo:
        return results
    order = sorted(range(len(todo)), key=lambda j: len(ids[j]))
    size = request.decode.batch_size
    if workers > 1 and len(order) < workers * size:
        size = max(1, -(-len(order) // workers))
    batches = [order[i : i + size] for i in range(0, len(order), size)]
    if request.sampling is None:  # (a sampled batch's draws follow the batches before it)
        batches.reverse()  # longest first: a bar's time left errs long, not short
    bar = (
        outer
        if outer is not None
        else progress_bar(
            total=len(batches), desc="translate", unit="batch", enabled=progress, leave=False
        )
    )
    check = abandoned()  # (worker threads do not see this thread's)

    def run(batch: list[int]) -> list[list[Translation]]:
        stop_if(check)
        rows = [todo[j] for j in batch]
        if recall is not None and (kept := recall(rows)) is not None:
            return kept
        texts = {"sources": [lines[i] for i in rows]} if request.alignments else {}
        return list(run_batch([ids[j] for j in batch], request.rows(rows), **texts))

    with contextlib.nullcontext() if outer is not None else bar, contextlib.ExitStack() as stack:
        if workers > 1 and len(batches) > 1:
            pool = stack.enter_context(ThreadPoolExecutor(workers, "translate"))
            done = pool.map(run, batches)
        else:
            done = map(run, batches)
        for batch, found in zip(batches, done):
            for j, hyps in zip(batch, found):
                results[todo[j]] = hyps
            if recall is not None:
                outer.keep([todo[j] for j in batch], found)
            bar.update(1 if outer is None else len(batch))
    return results
