"""Inline tags through translation (issue 45's "Tags"; docs/documents.md): the tagged
sources of tag_fixtures.py translated as HTML, one <p> per line, against the same lines
without tags; one JSON line per checkpoint and way of placing tags.

    python scripts/bench/bench_tags.py --checkpoint runs/m30k_guided/best.pt \\
        --checkpoint runs/m30k/best.pt \\
        --references ../shared/data/multi30k/test_2016_flickr.en.gz \\
        --align-with ../shared/data/multi30k/train.de.gz ../shared/data/multi30k/train.en.gz

Each checkpoint gives a row placing tags by its engine's word alignments (the guided head
where the model has one, else its attention) and a row with no alignment (each tag at the
same share of the words), from the same translations. A row holds: the share of tags
present in the output and of lines well-formed (every tag opened and closed in order, as
translate_html's own check reads them); BLEU of the output with its tags removed beside
BLEU of the untagged lines translated one by one; and placement: the share of tags that
wrap at least one output word eflomal aligns to the source words the tag wrapped and no
word outside the first to the last of those. eflomal aligns each source with its own
output with tags removed (--align-with adds a parallel corpus to learn from; its pairs are
left out of the figures); a tag whose source words eflomal aligns to nothing is not judged
(`unjudged`).

`--reference-row` adds rows with no model: each line's reference as its translation, with
eflomal's alignment of the two as the engine's, which shows how faithfully tags follow an
alignment (and the share of the measure's ceiling that the placement rules reach).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path

from translator.documents.html import build, translate_html
from translator.documents.html_attributes import readable
from translator.documents.html_units import Unit, tokens
from translator.errors import UserError


def read_lines(path: Path, limit: int | None = None) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = [" ".join(line.split()) for line in f]
    return lines[:limit] if limit else lines


def read_fixtures(path: Path, limit: int | None) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return rows[:limit] if limit else rows


def engine_translate(engine, request):
    """A translate callable for translate_html over `engine`, each sentence decoded once."""
    found: dict[str, tuple[str, object]] = {}

    def translate(sentences: list[str]):
        todo = [s for s in dict.fromkeys(sentences) if s not in found]
        for sentence, best in zip(todo, engine.translate(todo, request) if todo else []):
            found[sentence] = (best[0].text, getattr(best[0], "alignment", None))
        return [found[s] for s in sentences]

    return translate


def read_output(line: str) -> tuple[list[str], dict[str, tuple[int, int]], bool]:
    """An output line's words with tags removed, each complete tag's word range by its start
    tag, and whether the line is well-formed."""
    try:
        builder = build(tokens(line))
    except UserError:
        text = re.sub(r"<[^>]*>", " ", line)
        return text.split(), {}, False
    units = [p for p in builder.out if isinstance(p, Unit)]
    text = "".join(units[0].text) if units else ""
    starts = [m.start() for m in re.finditer(r"\S+", text)]
    ends = [m.end() for m in re.finditer(r"\S+", text)]
    ranges = {}
    for mark in units[0].marks if units else []:
        if mark.open_at is not None and mark.close_at is not None and not mark.atom:
            s = sum(e <= mark.open_at for e in ends)
            ranges[tag_key(mark.open_raw)] = (s, max(s, sum(t < mark.close_at for t in starts)))
    whole = len(units) == 1 and all(m.open_at is not None and m.close_at is not None
                                    for m in units[0].marks)  # fmt: skip
    return text.split(), ranges, whole


def tag_key(raw: str) -> str:
    """A start tag without the values of the attributes translation rewrites (`title`):
    the same tag before and after translation."""
    out = raw
    for a, b, _ in reversed(readable(raw)):
        out = out[:a] + out[b:]
    return out


def placed_well(source_range, output_range, links) -> bool | None:
    """Whether a tag wraps output words eflomal aligns to its source words (module
    docstring); None where eflomal aligns those source words to nothing."""
    aligned = {j for i, j in links if source_range[0] <= i < source_range[1]}
    if not aligned:
        return None
    x, y = output_range
    return (
        x < y and min(aligned) <= x and y - 1 <= max(aligned) and bool(aligned & set(range(x, y)))
    )


def bleu(hyps: list[str], refs: list[str]) -> float:
    import sacrebleu

    return round(sacrebleu.corpus_bleu(hyps, [refs]).score, 2)


def eflomal_links(sources: list[str], outputs: list[str], extra) -> list:
    from translator.data.align import align_texts

    src, tgt = list(sources), list(outputs)
    if extra:
        src += read_lines(Path(extra[0]))
        tgt += read_lines(Path(extra[1]))
    return align_texts(src, tgt)[: len(sources)]


def measure(fixtures, outputs: list[str], refs: list[str], links) -> dict:
    """A row's figures from its output lines (one per fixture)."""
    tags = present = well = judged = good = 0
    stripped = []
    for fixture, line, line_links in zip(fixtures, outputs, links):
        words, ranges, whole = read_output(line)
        stripped.append(" ".join(words))
        well += whole and len(ranges) == len(fixture["tags"])
        for start, end, raw in fixture["tags"]:
            tags += 1
            if (raw := tag_key(raw)) in ranges:
                present += 1
                verdict = placed_well((start, end), ranges[raw], line_links)
                judged += verdict is not None
                good += bool(verdict)
    share = lambda a, b: round(100 * a / max(b, 1), 2)  # noqa: E731
    return {
        "lines": len(fixtures),
        "tags": tags,
        "tags_present_pct": share(present, tags),
        "well_formed_pct": share(well, len(fixtures)),
        "bleu_tags_removed": bleu(stripped, refs) if refs else None,
        "placement_pct": share(good, judged),
        "judged": judged,
        "unjudged": present - judged,
    }


def rows_of(ways: dict, fixtures, refs, args, base: dict, links=None) -> list[dict]:
    """A row per way of translating (name -> translate callable) the fixtures as HTML; eflomal
    aligns the sources with the first way's output (the same words for every way)."""
    doc = "".join(f"<p>{f['html']}</p>\n" for f in fixtures)
    rows = []
    for way, fn in ways.items():
        outputs = translate_html(doc, fn, args.lang).split("\n")[: len(fixtures)]
        if links is None:
            words = [" ".join(read_output(line)[0]) for line in outputs]
            links = eflomal_links([f["source"] for f in fixtures], words, args.align_with)
        rows.append({**base, "alignments": way, **measure(fixtures, outputs, refs, links)})
    return rows


def bench_checkpoint(path: str, fixtures, refs, args) -> list[dict]:
    from translator.engines.load import load_engine

    engine = load_engine(path, args.device)
    capable = getattr(engine.capabilities, "alignments", False)
    request = engine.request(alignments=True) if capable else engine.request()
    translate = engine_translate(engine, request)
    plain = [t for t, _ in translate([f["source"] for f in fixtures])]
    base = {"checkpoint": path, "bleu_untagged": bleu(plain, refs) if refs else None}
    ways = {"none": lambda s: [(t, None) for t, _ in translate(s)]}
    if capable:
        head = getattr(engine.cfg.model, "alignment_head", None)
        ways = {"guided head" if head is not None else "attention": translate, **ways}
    return rows_of(ways, fixtures, refs, args, base)


def bench_references(fixtures, refs, args) -> list[dict]:
    """Each line "translated" to its reference with eflomal's alignment of the two: how
    faithfully tags follow an alignment, the model out of the way."""
    sources = [f["source"] for f in fixtures]
    links = eflomal_links(sources, refs, args.align_with)
    table = {s: (r, a) for s, r, a in zip(sources, refs, links)}
    for f in fixtures:  # the tags' titles, which translate_html translates apart: kept
        for tok in tokens(f["html"]):
            table.update({v: (v, None) for *_, v in readable(tok.raw) if v not in table})

    def translate(sentences):
        missing = [s for s in sentences if s not in table]
        if missing:
            raise SystemExit(f"--reference-row: a line was split into sentences: {missing[0]}")
        return [table[s] for s in sentences]

    ways = {"eflomal": translate, "none": lambda s: [(t, None) for t, _ in translate(s)]}
    base = {"checkpoint": "references", "bleu_untagged": 100.0}
    return rows_of(ways, fixtures, refs, args, base, links)


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", action="append", default=[])
    ap.add_argument(
        "--reference-row",
        action="store_true",
        help="rows translating each line to its reference (bench_references)",
    )
    ap.add_argument("--fixtures", type=Path, default=Path("results/tag_fixtures.jsonl"))
    ap.add_argument("--references", type=Path,
                    default=Path("../shared/data/multi30k/test_2016_flickr.en.gz"))  # fmt: skip
    ap.add_argument("--align-with", nargs=2, metavar=("SRC", "TGT"))
    ap.add_argument("--lang", default="de", help="the sources' language (sentence splitting)")
    ap.add_argument("--limit", type=int, help="the first N fixtures only")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--output", type=Path, help="also append the rows to this JSONL file")
    args = ap.parse_args(argv)
    fixtures = read_fixtures(args.fixtures, args.limit)
    refs = read_lines(args.references) if args.references.exists() else []
    refs = [refs[f["line"]] for f in fixtures] if refs else []
    if not args.checkpoint and not args.reference_row:
        ap.error("give --checkpoint, --reference-row or both")
    if args.reference_row and not refs:
        ap.error(f"--reference-row needs --references ({args.references} is missing)")
    rows = []
    command = "python scripts/bench/bench_tags.py " + " ".join(argv or sys.argv[1:])
    runs = [lambda: bench_references(fixtures, refs, args)] if args.reference_row else []
    runs += [lambda p=p: bench_checkpoint(p, fixtures, refs, args) for p in args.checkpoint]
    for run in runs:
        for row in run():
            print(json.dumps({**row, "command": command}), flush=True)
            rows.append({**row, "command": command})
    if args.output:
        with open(args.output, "a", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    return rows


if __name__ == "__main__":
    main()
