"""Where `translate` finds each line's target prefix and required phrases: one text (or list)
for every line, a file with one line per input line, and a terminology list whose source
terms are looked for in each line."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from itertools import count as numbered
from itertools import islice
from pathlib import Path

from translator.data.readers import iter_lines
from translator.data.user_text import blank, folded, phrase
from translator.errors import UserError


@dataclass
class Terms:
    """Source term -> target term. A source term found in a line, on whole words (case-
    sensitive unless asked otherwise), makes its target term a required phrase. Terms and
    lines are matched in NFC; without case, by full case folding (user_text.folded), so
    'STRASSE' finds 'Straße'. A term that holds nothing visible is a UserError."""

    pairs: list[tuple[str, str]]
    ignore_case: bool = False
    pattern: re.Pattern | None = field(default=None, repr=False)

    def __post_init__(self):
        self.pairs = [
            (phrase(s, "a source term").strip(), phrase(t, f"the target term of {s!r}").strip())
            for s, t in self.pairs
        ]
        keys = sorted({self._key(s) for s, _ in self.pairs}, key=len, reverse=True)
        words = "|".join(re.escape(k) for k in keys)  # longest first
        self.pattern = re.compile(rf"(?<!\w)(?:{words})(?!\w)") if keys else None
        self.target = {self._key(s): t for s, t in self.pairs}

    def _key(self, text: str) -> str:
        return folded(text)[0] if self.ignore_case else text

    @classmethod
    def read(cls, path: Path, ignore_case: bool = False) -> Terms:
        pairs = []
        for n, line in enumerate(iter_lines(path), 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
                raise UserError(
                    f"{path}:{n}: expected 'source term<TAB>target term', got {line[:60]!r}"
                )
            source, target = (phrase(p, f"{path}:{n}").strip() for p in parts)
            pairs.append((source, target))
        return cls(pairs, ignore_case)

    @classmethod
    def option(cls, path: Path | None, ignore_case: bool) -> Terms | None:
        """The glossary --terms and --terms-ignore-case give: None without one; ignoring
        case without a glossary is refused, not ignored."""
        if path is None:
            if ignore_case:
                raise UserError("--terms-ignore-case goes with --terms: give the glossary too")
            return None
        return cls.read(path, ignore_case)

    def spans(self, line: str) -> list[tuple[int, int, str]]:
        """(start, end, target term) of each source term found in `line`, left to right;
        start and end index `line` in NFC, whatever the folding did to lengths."""
        line = unicodedata.normalize("NFC", line)
        if self.pattern is None:
            return []
        text, starts = folded(line) if self.ignore_case else (line, range(len(line) + 1))
        index = {at: i for i, at in enumerate(starts)}  # folded offset -> character
        out, pos = [], 0
        while (m := self.pattern.search(text, pos)) is not None:
            begin, end = index.get(m.start()), index.get(m.end())
            if begin is None or end is None:  # inside one character's folding ('ß' -> 'ss')
                pos = m.start() + 1
                continue
            out.append((begin, end, self.target[m.group(0)]))
            pos = max(m.end(), m.start() + 1)
        return out

    def found(self, line: str) -> list[str]:
        """The target terms of the source terms in `line`, each once, in order."""
        return list(dict.fromkeys(t for _, _, t in self.spans(line)))

    def add_found(self, phrases: list[str], line: str) -> None:
        """The target terms found in `line` put after `phrases`, those it lacks."""
        phrases += [t for t in self.found(line) if t not in phrases]


def _lines_of(path: Path, input_file: Path, option: str, what: str) -> None:
    count, wanted = (sum(1 for _ in iter_lines(p)) for p in (path, input_file))
    if count != wanted:
        raise UserError(
            f"{option} {path}: {count} lines, but --input {input_file} has {wanted}; "
            f"give one line per input line ({what})"
        )


@dataclass
class LineGuides:
    """translate's --prefix/--prefixes, --constraint/--constraints and --terms together."""

    prefix: str | None = None  # every line's
    prefix_file: Path | None = None  # a line per input line
    constraints: list[str] = field(default_factory=list)  # every line's
    constraint_file: Path | None = None  # a line per input line, phrases TAB-separated
    terms: Terms | None = None
    terms_file: Path | None = None

    def __bool__(self) -> bool:
        return any(
            (self.prefix, self.prefix_file, self.constraints, self.constraint_file, self.terms)
        )

    def check(self, input_file: Path | None) -> None:
        """A UserError where the options do not go together."""
        if self.prefix is not None and self.prefix_file is not None:
            raise UserError("give --prefix TEXT or --prefixes FILE, not both")
        files = [(self.prefix_file, "--prefixes", "an empty line for none"),
                 (self.constraint_file, "--constraints", "phrases TAB-separated, or none")]  # fmt: skip
        for path, option, what in files:
            if path is None:
                continue
            if input_file is None:
                raise UserError(f"{option} FILE goes with --input F: one line per line of F")
            _lines_of(path, input_file, option, what)
        if self.constraint_file is not None:  # (before any work, not at its line)
            for n, line in enumerate(iter_lines(self.constraint_file), 1):
                self._phrases_of(line, n)

    def check_count(self, n: int, what: str) -> None:
        """A UserError unless each file has a line for each of the `n` sentences of `what`."""
        for path, option in ((self.prefix_file, "--prefixes"),
                             (self.constraint_file, "--constraints")):  # fmt: skip
            count = 0 if path is None else sum(1 for _ in iter_lines(path))
            if path is not None and count != n:
                raise UserError(
                    f"{option} {path}: {count} lines, but {what} has {n} sentences; give one "
                    "line per sentence"
                )

    def stamp(self, file_stamp) -> dict:
        """What the translations depend on (a resumed run with other guides starts over)."""
        files = {"prefixes": self.prefix_file, "constraints": self.constraint_file,
                 "terms": self.terms_file}  # fmt: skip
        stamps = {k: file_stamp(p) for k, p in files.items() if p is not None}
        return {"prefix": self.prefix, "constraint": list(self.constraints), **stamps}

    def _phrases_of(self, line: str, number: int) -> list[str]:
        """A --constraints line's phrases: none for a blank line; an empty phrase among
        others is an error naming the line, as an empty --constraint is."""
        if blank(line):
            return []
        phrases = line.split("\t")
        if any(blank(p) for p in phrases):
            raise UserError(f"{self.constraint_file}:{number}: an empty phrase (nothing visible "
                            "between TABs); give phrases, or an empty line for none")  # fmt: skip
        return phrases

    def reader(self, start: int = 0):
        """take(lines) -> (prefixes, constraints) of the next lines, from input line `start`
        (0-based) on; either is None where nothing was asked."""
        pre = (
            None if self.prefix_file is None else islice(iter_lines(self.prefix_file), start, None)
        )
        con = None
        if self.constraint_file is not None:
            con = islice(iter_lines(self.constraint_file), start, None)
        numbers = numbered(start + 1)  # the constraint file's line numbers, for its errors

        def take(lines: list[str]):
            prefixes = None
            if pre is not None:
                prefixes = [next(pre) for _ in lines]
            elif self.prefix is not None:
                prefixes = [self.prefix] * len(lines)
            phrases = [list(self.constraints) for _ in lines]
            if con is not None:
                for given in phrases:
                    given += self._phrases_of(next(con), next(numbers))
            if self.terms is not None:
                for given, line in zip(phrases, lines):
                    self.terms.add_found(given, line)
            return prefixes, phrases if any(phrases) else None

        return take
