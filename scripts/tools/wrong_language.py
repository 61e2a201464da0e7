"""The share of translations in another language than the one asked for (off-target output,
the usual failure of zero-shot directions), for English, German, French and Czech.

Each line is given the language whose common function words and letters it holds most:
a stopword counts 1, a letter only that language writes (ß, ě, ç, ...) counts 1 per line.
A line with none of them is "unknown" and counted apart.

    python scripts/tools/wrong_language.py --lang fr runs/multilingual/zeroshot.de-fr.txt
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

STOPWORDS = {
    "en": "the an is are of on in with and his her their while at to from who".split(),
    "de": "der die das ein eine einem einen einer und mit auf im ist sich den dem von zu".split(),
    "fr": "le la les un une des du et sur avec dans est au aux qui se sont son sa".split(),
    "cs": "na se v ve s z k je muž žena dva tři jsou který která do před při pro".split(),
}
LETTERS = {"de": "äöüß", "fr": "èêàçùâîôœ", "cs": "ěščřžůňťďáíý", "en": ""}
WORD = re.compile(r"\w+")


def language_of(line: str) -> str:
    """The most likely of en, de, fr, cs for `line`, or "unknown"."""
    words = WORD.findall(line.lower())
    scores = Counter()
    for lang, stop in STOPWORDS.items():
        scores[lang] = sum(w in stop for w in words)
        scores[lang] += any(ch in LETTERS[lang] for ch in line.lower())
    (best, top), *rest = scores.most_common()
    if top == 0 or (rest and rest[0][1] == top):
        return "unknown"
    return best


def shares(lines: list[str], lang: str) -> dict:
    found = Counter(language_of(line) for line in lines)
    n = max(len(lines), 1)
    wrong = sum(c for k, c in found.items() if k not in (lang, "unknown"))
    return {
        "lines": len(lines),
        "expected": lang,
        "wrong_share": round(wrong / n, 4),
        "unknown_share": round(found["unknown"] / n, 4),
        "by_language": dict(found.most_common()),
        "method": "stopwords and language-specific letters",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="translations, one a line")
    parser.add_argument("--lang", required=True, choices=sorted(STOPWORDS))
    args = parser.parse_args()
    try:
        lines = args.file.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        sys.exit(f"{args.file}: {err.strerror}")
    print(json.dumps({"file": str(args.file), **shares(lines, args.lang)}, ensure_ascii=False))


if __name__ == "__main__":
    main()
