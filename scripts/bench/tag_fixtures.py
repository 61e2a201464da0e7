"""Tagged sources for the tag benchmark (bench_tags.py, docs/documents.md): each line of
a test set with 1 to 3 inline tags around random spans of its words, some nested, some with
attributes, drawn with --seed; one JSON object a line.

    python scripts/bench/tag_fixtures.py \\
        --source ../shared/data/multi30k/test_2016_flickr.de.gz \\
        --output results/tag_fixtures.jsonl

Each object: `line` (0-based in --source), `source` (the line's words, one space apart),
`html` (the same words, escaped, with the tags) and `tags`: per tag [start, end, start tag]
as a word range of `source.split()` and its start tag as written. A line's tags are of
different kinds, so a start tag names one tag of its line.
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import random
from pathlib import Path

from translator.fileio import atomic_write_bytes

KINDS = [
    "<b>",
    "<i>",
    "<em>",
    "<strong>",
    "<u>",
    '<span class="hl">',
    '<a href="https://example.org/{n}" title="link {n}">',
    '<span lang="de" data-n="{n}">',
]
NESTED = 0.3  # chance that a further tag goes inside one already drawn


def read_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [" ".join(line.split()) for line in f]


def draw_spans(rng: random.Random, n: int, count: int) -> list[tuple[int, int]]:
    """Up to `count` nested or disjoint nonempty word ranges of a line of `n` words."""
    spans: list[tuple[int, int]] = []
    for _ in range(count):
        if spans and rng.random() < NESTED:
            outer = rng.choice(spans)
            start = rng.randrange(outer[0], outer[1])
            end = rng.randint(start + 1, outer[1])
        else:
            free = [i for i in range(n) if not any(s <= i < e for s, e in spans)]
            if not free:
                continue
            start = rng.choice(free)
            end = start + 1  # grow over free words, never into a tag drawn before
            while end < n and end - start < 4 and end in free and rng.random() < 0.6:
                end += 1
        if all(_nest((start, end), other) for other in spans):
            spans.append((start, end))
    return sorted(spans, key=lambda s: (s[0], -s[1]))


def _nest(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two different ranges are apart or one holds the other."""
    apart = a[1] <= b[0] or b[1] <= a[0]
    return a != b and (apart or a[0] <= b[0] and b[1] <= a[1] or b[0] <= a[0] and a[1] <= b[1])


def tagged(words: list[str], tags: list[tuple[int, int, str]]) -> str:
    """The words escaped, with each tag's start before its first word and its end after
    its last (outer tags first where two start or end together)."""
    out = []
    for i, word in enumerate(words):
        opens = [t for s, e, t in tags if s == i]
        closes = sorted(((s, t) for s, e, t in tags if e == i + 1), reverse=True)
        piece = "".join(opens) + html.escape(word, quote=False)
        piece += "".join(f"</{t[1:].split('>')[0].split()[0]}>" for _, t in closes)
        out.append(piece)
    return " ".join(out)


def fixture(n: int, line: str, rng: random.Random) -> dict:
    words = line.split()
    spans = draw_spans(rng, len(words), rng.randint(1, 3)) if words else []
    kinds = rng.sample(KINDS, len(spans))
    tags = [(s, e, kind.format(n=n)) for (s, e), kind in zip(spans, kinds)]
    return {"line": n, "source": line, "html": tagged(words, tags), "tags": tags}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path,
                    default=Path("../shared/data/multi30k/test_2016_flickr.de.gz"))  # fmt: skip
    ap.add_argument("--output", type=Path, default=Path("results/tag_fixtures.jsonl"))
    ap.add_argument("--seed", type=int, default=45)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    rows = [fixture(n, line, rng) for n, line in enumerate(read_lines(args.source))]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    atomic_write_bytes(args.output, text.encode("utf-8"))
    tags = sum(len(r["tags"]) for r in rows)
    print(json.dumps({"lines": len(rows), "tags": tags, "output": str(args.output)}))


if __name__ == "__main__":
    main()
