"""Word alignments of the training pairs for guided alignment (train.guided_alignment).

eflomal (Östling and Tiedemann 2016) aligns the prepared pairs once in each direction; the
two are symmetrised by grow-diag-final-and (Koehn et al. 2005) and cached beside the
prepared data (`align.json` names what they were made from). A word is a run of subword
pieces from one that starts with sentencepiece's word mark to the next, so words and pieces
agree by construction. At each batch the word links become a [B, T, S] matrix: each target
piece of tgt_out is linked to the source pieces of the words its word is aligned to.

Texts (the alignment benchmark) are aligned by `align_texts`, words being `text.split()`.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import torch

from translator.data.batching import Batch, PairIds
from translator.errors import UserError
from translator.fileio import atomic_write_bytes, file_digest
from translator.fileio.outputs import record
from translator.specials import EOS

log = logging.getLogger(__name__)

WORD_MARK = "\u2581"
FORMAT = 1  # of the cached files
FILES = ("align_links.npy", "align_offsets.npy")
NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))

Links = list[tuple[int, int]]


# ---------------------------------------------------------------- aligning


def _eflomal():
    try:
        import eflomal
    except ImportError:
        raise UserError(
            "guided alignment needs the eflomal aligner, which is not installed",
            'pip install -e ".[align]"',
        ) from None
    return eflomal


def grow_diag_final_and(forward: Links, reverse: Links) -> Links:
    """The symmetrisation of two directional alignments (both as (source, target) pairs):
    their intersection, grown by the union's neighbouring points (diagonals included) that
    align a word not yet aligned, then the union's points whose words are both unaligned."""
    fwd, rev = set(forward), set(reverse)
    union, points = fwd | rev, fwd & rev
    src_done = {i for i, _ in points}
    tgt_done = {j for _, j in points}

    def add(p):
        points.add(p)
        src_done.add(p[0])
        tgt_done.add(p[1])

    grown = True
    while grown:
        grown = False
        for i, j in sorted(points):
            for di, dj in NEIGHBOURS:
                p = (i + di, j + dj)
                if (
                    p in union
                    and p not in points
                    and (p[0] not in src_done or p[1] not in tgt_done)
                ):
                    add(p)
                    grown = True
    for side in (sorted(fwd), sorted(rev)):
        for p in side:
            if p[0] not in src_done and p[1] not in tgt_done:
                add(p)
    return sorted(points)


def _parse(line: str) -> Links:
    return [tuple(map(int, link.split("-"))) for link in line.split()]


def align_word_lines(src: list[str], tgt: list[str]) -> list[Links]:
    """Symmetrised eflomal alignments of line pairs of space-separated words."""
    eflomal = _eflomal()
    if not src:
        return []
    # an empty side gives eflomal nothing to align: such pairs get no links
    keep = [i for i, (s, t) in enumerate(zip(src, tgt)) if s.strip() and t.strip()]
    out: list[Links] = [[] for _ in src]
    if not keep:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
        eflomal.Aligner().align(
            [src[i] for i in keep],
            [tgt[i] for i in keep],
            links_filename_fwd=str(fwd),
            links_filename_rev=str(rev),
            quiet=True,
        )
        fwd_lines = fwd.read_text(encoding="utf-8").splitlines()
        rev_lines = rev.read_text(encoding="utf-8").splitlines()
    for i, f, r in zip(keep, fwd_lines, rev_lines):
        out[i] = grow_diag_final_and(_parse(f), _parse(r))
    return out


def align_texts(src: list[str], tgt: list[str]) -> list[Links]:
    """Word alignments of sentence pairs, words being `text.split()` of each side."""
    return align_word_lines([" ".join(s.split()) for s in src], [" ".join(t.split()) for t in tgt])


# ---------------------------------------------------------------- pieces and words


def word_starts(processor) -> np.ndarray:
    """Per vocabulary id: whether its piece starts a word (bears the word mark)."""
    n = processor.get_piece_size()
    return np.array([processor.id_to_piece(i).startswith(WORD_MARK) for i in range(n)], bool)


def piece_words(ids: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The word index of each piece of one sequence; -1 for the specials (ids up to </s>).
    A first piece without the word mark (a tag) starts the first word."""
    ids = np.asarray(ids, dtype=np.int64)
    real = ids > EOS
    begins = starts[ids] & real
    if real.any():
        begins[np.argmax(real)] = True
    words = np.cumsum(begins) - 1
    return np.where(real, words, -1)


def _words(ids: np.ndarray, starts: np.ndarray, pieces: list[str]) -> str:
    """One sequence's words, space-separated, spelled by their pieces."""
    index = piece_words(ids, starts)
    words: list[str] = []
    for i, w in zip(ids.tolist(), index.tolist()):
        if w < 0:
            continue
        if w == len(words):
            words.append("")
        words[w] += pieces[i]
    return " ".join(w.replace(WORD_MARK, "") or WORD_MARK for w in words)


def _pieces(processor) -> list[str]:
    # whitespace inside a piece (none in sentencepiece's own) would split a word for eflomal
    return ["_".join(processor.id_to_piece(i).split()) for i in range(processor.get_piece_size())]


def piece_matrix(src: np.ndarray, tgt_out: np.ndarray, links, src_starts, tgt_starts):
    """[T, S] bool: target piece t linked to source piece s through their words' links."""
    sw, tw = piece_words(src, src_starts), piece_words(tgt_out, tgt_starts)
    out = np.zeros((len(tgt_out), len(src)), bool)
    if len(links) == 0 or sw.max(initial=-1) < 0 or tw.max(initial=-1) < 0:
        return out
    words = np.zeros((int(tw.max()) + 1, int(sw.max()) + 1), bool)
    links = np.asarray(links).reshape(-1, 2)
    inside = (links[:, 0] < words.shape[1]) & (links[:, 1] < words.shape[0])
    words[links[inside, 1], links[inside, 0]] = True
    rows, cols = tw >= 0, sw >= 0
    out[np.ix_(rows, cols)] = words[np.ix_(tw[rows], sw[cols])]
    return out


# ---------------------------------------------------------------- the cache


def _identity(prepared) -> dict:
    files = prepared.manifest["files"]
    try:
        version = metadata.version("eflomal")
    except metadata.PackageNotFoundError:
        version = "?"
    return {
        "format": FORMAT,
        "prepared": prepared.manifest["key"],
        "data": {name: files[name]["sha1"] for name in ("src.npy", "tgt.npy") if name in files},
        "tokenizer": prepared.tokenizer.fingerprint(),
        "aligner": f"eflomal {version}",
        "symmetrisation": "grow-diag-final-and",
    }


def _load(folder: Path, identity: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """The cached links and offsets if `align.json` was written for `identity` and every
    file is as it recorded; else None."""
    try:
        saved = json.loads((folder / "align.json").read_text(encoding="utf-8"))
        if not isinstance(saved, dict) or saved.get("identity") != identity:
            return None
        for name in FILES:
            if file_digest(folder / name, "sha1") != saved["files"][name]:
                return None
        links = np.load(folder / FILES[0], mmap_mode="r")
        offsets = np.load(folder / FILES[1])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return links, offsets


def _compute(prepared) -> tuple[np.ndarray, np.ndarray]:
    ids, tok = prepared.ids, prepared.tokenizer
    sides = []
    for sp, tokens, offsets, frame in (
        (tok.src, ids.src, ids.src_offsets, 0),
        (tok.tgt, ids.tgt, ids.tgt_offsets, 1),
    ):
        starts, pieces = word_starts(sp), _pieces(sp)
        sides.append(
            [
                _words(np.asarray(tokens[offsets[r] + frame : offsets[r + 1]]), starts, pieces)
                for r in range(len(ids))
            ]
        )
    found = align_word_lines(sides[0], sides[1])
    lengths = np.array([len(links) for links in found], dtype=np.int64)
    offsets = np.zeros(len(found) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = [p for links in found for p in links]
    links = np.array(flat, dtype=np.int32).reshape(-1, 2)
    return links, offsets


def _save(folder: Path, name: str, array: np.ndarray) -> None:
    with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{name}.", suffix=".tmp",
                                     delete=False) as f:  # fmt: skip
        np.save(f, array)
    Path(f.name).replace(folder / name)


def cached_alignments(prepared) -> tuple[np.ndarray, np.ndarray]:
    """The training pairs' word links [L, 2] (source word, target word) and each pair's
    offsets into them [N + 1]: from the cache beside the prepared data, else made by
    eflomal and written there (under the prepared folder's lock, each file atomically and
    `align.json`, which vouches for them, last)."""
    from translator.data.prepare import _locked

    folder, identity = Path(prepared.folder), _identity(prepared)
    with _locked(folder):
        found = _load(folder, identity)
        if found is not None:
            log.info("word alignments: %s (cached)", folder / "align.json")
            return found
        start = time.perf_counter()
        log.info("aligning %d training pairs with eflomal (once: cached)", len(prepared.ids))
        links, offsets = _compute(prepared)
        for name, array in zip(FILES, (links, offsets)):
            _save(folder, name, array)
        files = {name: file_digest(folder / name, "sha1") for name in FILES}
        seconds = round(time.perf_counter() - start, 2)
        saved = {"identity": identity, "files": files, "links": len(links), "seconds": seconds}
        atomic_write_bytes(folder / "align.json", json.dumps(saved, indent=1).encode())
        record(folder, [*FILES, "align.json"], "prepare")
        log.info("word alignments: %d links in %.1f s", len(links), seconds)
        found = _load(folder, identity)
        if found is None:
            raise UserError(f"{folder / 'align.json'}: unreadable right after it was written")
        return found


# ---------------------------------------------------------------- batches


class AlignedIds(PairIds):
    """Prepared pairs whose batches carry their alignment matrix (Batch.align)."""

    def __init__(self, ids: PairIds, links: np.ndarray, offsets: np.ndarray, tokenizer):
        super().__init__(ids.src, ids.src_offsets, ids.tgt, ids.tgt_offsets, ids.cost, ids.maps)
        self.links, self.link_offsets = links, offsets
        self.src_starts, self.tgt_starts = word_starts(tokenizer.src), word_starts(tokenizer.tgt)

    def collate(self, rows, key: tuple = ()) -> Batch:
        batch = super().collate(rows, key)
        rows = np.asarray(rows, dtype=np.int64)
        align = np.zeros((len(rows), batch.tgt_out.size(1), batch.src.size(1)), bool)
        so, to, lo = self.src_offsets, self.tgt_offsets, self.link_offsets
        for b, r in enumerate(rows):
            m = piece_matrix(
                np.asarray(self.src[so[r] : so[r + 1]]),
                np.asarray(self.tgt[to[r] + 1 : to[r + 1]]),
                self.links[lo[r] : lo[r + 1]],
                self.src_starts,
                self.tgt_starts,
            )
            align[b, : m.shape[0], : m.shape[1]] = m
        batch.align = torch.from_numpy(align)
        return batch


def guided(cfg) -> bool:
    """Whether `cfg` trains with guided alignment; a setting it cannot take is a one-line
    error naming the key."""
    if not cfg.train.guided_alignment:
        return False
    if "alignment_head" not in type(cfg.model).model_fields:
        raise UserError(
            f"train.guided_alignment: only model.type transformer trains an alignment head, "
            f"not {cfg.model.type}; set it to 0"
        )
    if cfg.model.alignment_head is None:
        raise UserError(
            "train.guided_alignment needs model.alignment_head, the head it trains (0 is usual)"
        )
    if cfg.tokenizer.sampling_alpha is not None:
        raise UserError(
            "train.guided_alignment: the alignments follow the prepared segmentation, which "
            "tokenizer.sampling_alpha redraws; set one of them off"
        )
    if cfg.data.training_corpora():
        raise UserError(
            "train.guided_alignment takes one training corpus, not data.corpora or "
            "data.directions; set it to 0"
        )
    return True


def aligned_ids(prepared) -> AlignedIds:
    """The prepared pairs with their (cached) word alignments."""
    links, offsets = cached_alignments(prepared)
    if len(offsets) != len(prepared.ids) + 1:
        raise UserError(f"{prepared.folder / 'align.json'}: made for another number of pairs")
    return AlignedIds(prepared.ids, links, offsets, prepared.tokenizer)
