"""Corpus-level scores through sacreBLEU, with its reproducibility signatures."""

from __future__ import annotations

from sacrebleu.metrics import BLEU, CHRF, TER

from translator.errors import UserError

# Sentences scored at a time: sacreBLEU's reference cache (chrF's n-gram counters above
# all, some 19 KB a sentence) then lives for one chunk, not for the whole test set.
CHUNK = 2000


def corpus_score(metric, hypotheses: list[str], refs: list[list[str]]):
    """`metric.corpus_score(hypotheses, refs)`, the same score and signature, reached
    chunk by chunk: each chunk's sentence statistics are added up as sacreBLEU's
    `sum_of_lists` would add them over the whole corpus, in the same order."""
    try:
        from sacrebleu.utils import sum_of_lists

        metric._check_corpus_score_args(hypotheses, refs)
        total, num_refs, force = None, set(), metric._force
        try:
            for i in range(0, len(hypotheses), CHUNK):
                hyps = hypotheses[i : i + CHUNK]
                stats = metric._extract_corpus_statistics(hyps, [r[i : i + CHUNK] for r in refs])
                total = sum_of_lists(stats if total is None else [total, *stats])
                num_refs.add(metric.num_refs)
                metric._force = True  # BLEU's tokenized-text warning: the first chunk's alone
        finally:
            metric._force = force
        metric.num_refs = num_refs.pop() if len(num_refs) == 1 else -1  # -1: it varies
        return metric._compute_score_from_stats(total)
    except AttributeError:  # a sacreBLEU whose private interface moved: the whole corpus at once
        return metric.corpus_score(hypotheses, refs)


def score(hypotheses: list[str], references: list[str], more: list[list[str]] = ()) -> dict:
    """BLEU, chrF and TER of hypotheses against a reference each, and as many more as
    `more` holds (each a list as long as `references`)."""
    refs = [references, *more]
    assert all(len(hypotheses) == len(r) for r in refs)
    bleu, chrf, ter = BLEU(), CHRF(), TER()
    b = corpus_score(bleu, hypotheses, refs)
    c = corpus_score(chrf, hypotheses, refs)
    t = corpus_score(ter, hypotheses, refs)
    return {
        "bleu": round(b.score, 2),
        "chrf": round(c.score, 2),
        "ter": round(t.score, 2),
        "signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
        "ter_signature": str(ter.get_signature()),
        "n": len(hypotheses),
    }


def bleu(hypotheses: list[str], references: list[str], more: list[list[str]] = ()) -> float:
    return corpus_score(BLEU(), hypotheses, [references, *more]).score


def by_length(
    sources: list[str],
    hypotheses: list[str],
    references: list[str],
    width: int = 5,
    min_count: int = 20,
    more: list[list[str]] = (),
) -> list[dict]:
    """Corpus BLEU per source-length bucket (whitespace words), as in Bahdanau et al.'s Fig. 2,
    against `references` and the further references `more`.

    Buckets are `width` words wide; the long tail is merged into one open bucket
    once fewer than `min_count` sentences would remain beyond it.
    """
    lengths = [len(s.split()) for s in sources]
    edges = [0]
    while sum(n > edges[-1] + width for n in lengths) >= min_count:
        edges.append(edges[-1] + width)
    rows = []
    for i, low in enumerate(edges):
        high = edges[i + 1] if i + 1 < len(edges) else None
        first = low if i == 0 and 0 in lengths else low + 1  # (empty sources go first)
        idx = [j for j, n in enumerate(lengths) if first <= n and (high is None or n <= high)]
        if not idx:
            continue
        label = f"{first}-{high}" if high is not None else f"{first}+"
        hyps, *refs = ([r[j] for j in idx] for r in (hypotheses, references, *more))
        rows.append(
            {"bucket": label, "n": len(idx), "bleu": round(bleu(hyps, refs[0], refs[1:]), 2)}
        )
    return rows


def honoured(hypotheses: list[str], phrases: list[list[str]]) -> dict:
    """How many of the required phrases the hypotheses hold (as text)."""
    given = sum(len(p) for p in phrases)
    held = sum(p.strip() in h for h, ps in zip(hypotheses, phrases) for p in ps)
    return {"given": given, "honoured": held}


def evaluate_translator(
    translator,
    data,
    seed: int,
    dc,
    split: str,
    files,
    with_lengths: bool,
    guides=None,
    outputs=None,
    points: list | None = None,
    references: list | None = None,
) -> tuple[dict, list[str]]:
    """Decode `split` of the data section `data` (or the `files` when given: a source file
    and a list of reference files) with the decode settings `dc` and score it: (scores and
    settings, hypotheses);
    `with_lengths` adds BLEU by source length; `guides` (line_guides.LineGuides, a line per
    sentence) adds required phrases, and how many the translations hold; `outputs` (option
    -> path): files the command writes, refused if they name one of the data's files;
    `points`, a list: the translations' confidence is asked for too and reported (how well
    it ranks them, decode/confidence_report.py), each sentence's (confidence, chrF / 100)
    added to the list; `references`, a list: the references scored against are added to it
    (a list of lines per reference)."""
    from translator.data.corpus import open_source, read_pair_files
    from translator.decode.request import DecodeRequest
    from translator.fileio.outputs import distinct_outputs

    src, ref = files
    ref, more_refs, more = ref[0] if ref else None, ref[1:] if ref else [], []
    try:
        source = open_source(data, seed)  # the training split is not read
    except UserError:
        if src is None:
            raise
        source = None  # files given: the model's data is guarded only where it is here
    if source is not None:
        distinct_outputs(outputs, {f"of the model's data ({f.name})": f for f in source.files})
    if src is not None:
        pairs, what = read_pair_files(src, ref), f"{src} -> {' + '.join(map(str, files[1]))}"
        more = [[t for _, t in read_pair_files(src, path)] for path in more_refs]
    else:
        pairs, what = list(source.pairs(split)), source.label(split)
    if not pairs:  # sacreBLEU has no score for no sentences; a score of 0 would mislead
        raise UserError(f"{what}: empty, no sentences to score")
    sources, refs = [s for s, _ in pairs], [t for _, t in pairs]
    request, phrases = DecodeRequest(dc), None
    if guides:
        guides.check_count(len(sources), what)
        prefixes, phrases = guides.reader()(sources)
        request = request.guided(translator.tokenizer, sources, translator.max_target,
                                 prefixes, phrases)  # fmt: skip
    if points is not None:
        request = request.replace(confidence=True)
        translator.check_confidence(request)
    found = translator.translate(sources, request, progress=True)
    hyps = [r[0].text for r in found]
    if references is not None:
        references.extend([refs, *more])
    settings = {"beam": dc.beam, "len_penalty": dc.len_penalty, "len_norm": dc.len_norm}
    result = {**score(hyps, refs, more), **settings, "data": what}
    if phrases is not None:
        result["constraints"] = honoured(hyps, phrases)
    if with_lengths:
        result["by_length"] = by_length(sources, hyps, refs, more=more)
    if points is not None:
        from translator.decode.confidence_report import confidence_report

        calibration = getattr(translator, "calibration", None)
        result["confidence"], drawn = confidence_report(
            [r[0] for r in found], refs, calibration, sources
        )
        points.extend(drawn)
    return result, hyps


def report_lines(result: dict, by_length: bool) -> list[str]:
    """`translator eval`'s plain-text report of one model's result."""
    lines = [
        f"{result['data']}: {result['n']} sentences, beam {result['beam']}",
        f"BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}  TER {result['ter']:.2f}",
        f"BLEU signature: {result['signature']}",
        f"chrF signature: {result['chrf_signature']}",
        f"TER signature: {result['ter_signature']}",
    ]
    if "constraints" in result:
        c = result["constraints"]
        share = 100 * c["honoured"] / max(1, c["given"])
        lines.append(f"constraints honoured: {c['honoured']} of {c['given']} ({share:.1f}%)")
    for row in result.get("by_length", []) if by_length else []:
        lines.append(f"  source words {row['bucket']:>6}: BLEU {row['bleu']:6.2f}  (n={row['n']})")
    if "confidence" in result:
        from translator.decode.confidence_report import report_lines as confidence_lines

        lines += confidence_lines(result["confidence"])
    return lines
