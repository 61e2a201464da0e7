"""Sequence-level knowledge distillation (Kim & Rush 2016): a teacher translates the
training sources of a config, and a student trains on its translations.

For each training corpus (data.train, or each of data.corpora) `distill_corpora` writes,
into one folder:
- NAME.SRC, the corpus's sources, one a line, and NAME.ref.TGT their references;
- NAME.TGT, the teacher's translation of each source line, aligned with NAME.SRC;
- NAME.json, what they were made from (the corpus, the teacher, the search).

The sources are read once from wherever the corpus lives (files, TSV, JSONL, a hub
dataset) and written whole; the translation is `translate --input --output`'s resumable
one (decode/resumable.py), so a run stopped at any point continues where it stopped with
no line lost or doubled. With `nbest` K > 1 the teacher writes its K best and the one with
the highest sentence BLEU against the reference is kept, as the Bergamot pipeline does.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from translator.data.corpora import training_sources
from translator.decode.request import DecodeRequest
from translator.decode.resumable import file_stamp, stopped_files, translate_file
from translator.errors import UserError
from translator.fileio import atomic_files, atomic_open, atomic_write_bytes
from translator.progress import progress_bar

log = logging.getLogger(__name__)


@dataclass
class Distilled:
    """One corpus's distilled files."""

    name: str
    src: Path
    tgt: Path
    lines: int
    weight: float = 1.0  # the corpus's own, so that the student sees the teacher's mix
    tag: str | None = None

    def entry(self) -> str:
        """The data.corpora entry that trains on it (YAML)."""
        weight = f", weight: {self.weight:g}" if self.weight != 1.0 else ""
        tag = f", tag: {json.dumps(self.tag)}" if self.tag else ""  # ("<bt>" quoted)
        return f"{{train: {{src: {self.src}, tgt: {self.tgt}}}{weight}{tag}}}"


def one_line(text: str) -> str:
    return " ".join(text.splitlines())


def _read_record(record: Path) -> dict | None:
    """A record this command wrote, or None (logged) when it is not one: it only says what
    is done, so a damaged one costs the work again, never a traceback."""
    try:
        saved = json.loads(record.read_text(encoding="utf-8"))
        lines = saved.get("lines") if isinstance(saved, dict) else None
    except (OSError, ValueError, UnicodeDecodeError):
        lines = None
    if isinstance(lines, int) and not isinstance(lines, bool) and lines > 0:
        return saved
    log.warning("%s is not a record distill wrote: its corpus is extracted again", record)
    return None


def extract(source, src_file: Path, ref_file: Path, record: Path) -> dict:
    """Write the corpus's sources and references, unless an earlier run wrote these same
    ones; the record of what the folder holds ("lines": how many)."""
    stamp = {"corpus": source.fingerprint, "description": source.description}
    if record.is_file() and src_file.is_file() and ref_file.is_file():
        saved = _read_record(record)
        if saved is not None and saved.get("corpus") == stamp:
            return saved
    lines = 0
    with atomic_files((src_file, "w", "utf-8"), (ref_file, "w", "utf-8")) as (s, r):
        for src, ref in progress_bar(source.pairs("train"), desc="read", unit="pair"):
            s.write(one_line(src) + "\n")
            r.write(one_line(ref) + "\n")
            lines += 1
    if not lines:
        raise UserError(f"{source.description}: the training corpus has no pairs to distill")
    saved = {"corpus": stamp, "lines": lines}
    atomic_write_bytes(record, json.dumps(saved).encode())
    return saved


def nbest_lists(path: Path) -> Iterator[list[str]]:
    """The K-best lists `translate --nbest` wrote (index TAB score TAB text), one per input."""
    current, texts = None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            index, _, text = line.rstrip("\n").split("\t", 2)
            if index != current and texts:
                yield texts
                texts = []
            current = index
            texts.append(text)
    if texts:
        yield texts


@functools.cache
def _sentence_bleu():
    from sacrebleu.metrics import BLEU

    return BLEU(effective_order=True)


def best_by_bleu(hypotheses: list[str], reference: str) -> str:
    """The hypothesis of the highest sentence BLEU against the reference; on a tie the
    teacher's likelier one."""
    bleu = _sentence_bleu()
    scores = [bleu.sentence_score(h, [reference]).score for h in hypotheses]
    return hypotheses[max(range(len(scores)), key=lambda k: (scores[k], -k))]


def pick(nbest_file: Path, ref_file: Path, out_file: Path) -> None:
    """Keep each line's best hypothesis by sentence BLEU (module docstring)."""
    with (
        open(ref_file, encoding="utf-8") as refs,
        atomic_open(out_file, "w", encoding="utf-8") as out,
    ):
        for hyps, ref in progress_bar(zip(nbest_lists(nbest_file), refs), desc="pick", unit="line"):
            out.write(best_by_bleu(hyps, ref.rstrip("\n")) + "\n")


def corpus_files(folder: Path, name: str, src_lang: str, tgt_lang: str) -> list[Path]:
    """A corpus's files in `folder` (module docstring): its sources, references, the
    teacher's translations, its record and the teacher's K best (while they are picked)."""
    names = (f"{name}.{src_lang}", f"{name}.ref.{tgt_lang}", f"{name}.{tgt_lang}",
             f"{name}.json", f"{name}.nbest.{tgt_lang}")  # fmt: skip
    return [folder / n for n in names]


def written_files(folder: Path, name: str, src_lang: str, tgt_lang: str) -> list[Path]:
    """Every file distilling corpus `name` may write in `folder`, stopped translations'
    (resumable.stopped_files) included."""
    files = corpus_files(folder, name, src_lang, tgt_lang)
    return files + [f for path in files for f in stopped_files(path)]


def distill_corpora(engine, cfg, folder: Path, dc, nbest: int, model: list) -> list[Distilled]:
    """Translate each training corpus of `cfg` with `engine` into `folder` (module
    docstring); `model`: what identifies the teacher (model_stamps)."""
    folder.mkdir(parents=True, exist_ok=True)
    src_lang, tgt_lang = cfg.data.src_lang, cfg.data.tgt_lang
    teacher = engine.cfg.data
    if (teacher.src_lang, teacher.tgt_lang) != (src_lang, tgt_lang):
        raise UserError(
            f"the teacher translates {teacher.src_lang}->{teacher.tgt_lang} but the config's "
            f"data is {src_lang}->{tgt_lang} (data.src_lang, data.tgt_lang)"
        )
    out, corpora = [], cfg.data.training_corpora() or []
    for i, (name, source) in enumerate(training_sources(cfg)):
        src, ref, tgt, record, kbest = corpus_files(folder, name, src_lang, tgt_lang)
        saved = extract(source, src, ref, record)
        lines = saved["lines"]
        done = {"model": model, "decode": dc.to_dict(), "nbest": nbest, "source": file_stamp(src)}
        if saved.get("translated") == done and tgt.is_file():
            log.info("%s: already distilled into %s", source.description, tgt)
        else:
            log.info("%s: %d lines to %s", source.description, lines, tgt)
            if nbest == 1:
                translate_file(engine, src, tgt, DecodeRequest(dc, 1), model)
            else:
                if not (kbest.is_file() and saved.get("nbest_done") == done):
                    translate_file(engine, src, kbest, DecodeRequest(dc, nbest), model)
                    saved["nbest_done"] = done  # a run stopped while picking picks again
                    atomic_write_bytes(record, json.dumps(saved).encode())
                pick(kbest, ref, tgt)
                kbest.unlink()
            saved["translated"] = done
            atomic_write_bytes(record, json.dumps(saved).encode())
        own = (corpora[i].weight, corpora[i].tag) if corpora else ()
        out.append(Distilled(name, src, tgt, lines, *own))
    return out
