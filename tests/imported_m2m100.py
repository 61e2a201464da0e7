"""The imported NLLB and M2M100 models the import tests share: each kind's tiny random folder
imported, with transformers' own model and tokenizer of it, and the id tables between them."""

from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from pretrained_m2m100 import m2m100_folder, nllb_folder

from translator.models.checkpoint import Checkpoint
from translator.pretrained import import_pretrained
from translator.specials import PAD

STEPS = 20  # greedy output tokens at most, <eos> and the forced language code not counted


@dataclass
class Imported:
    folder: Path
    path: Path  # the imported checkpoint
    hf: object  # transformers' model
    tok: object  # its tokenizer
    src: str  # the source language's code
    targets: tuple[str, str]  # two target codes, the folder's own tgt_lang second
    piece: str  # how the tokenizer spells the first target's code


KINDS = {
    "nllb": (nllb_folder, "NllbTokenizer", "deu_Latn", ("fra_Latn", "eng_Latn"), "fra_Latn"),
    "m2m100": (m2m100_folder, "M2M100Tokenizer", "de", ("fr", "en"), "__fr__"),
}


def import_kind(kind: str, tmp_path_factory) -> Imported:
    """The KINDS entry `kind` built, imported, and read by transformers."""
    transformers = pytest.importorskip("transformers")
    build, tokenizer, src, targets, piece = KINDS[kind]
    root = tmp_path_factory.mktemp(kind)
    folder = build(root / "hf")
    import_pretrained(str(folder), root / "imported.pt")
    hf = transformers.M2M100ForConditionalGeneration.from_pretrained(folder).eval()
    tok = getattr(transformers, tokenizer).from_pretrained(folder)
    return Imported(folder, root / "imported.pt", hf, tok, src, targets, piece)


def table(path) -> torch.Tensor:
    """translator id -> the model's id."""
    return torch.tensor(Checkpoint.load(path).source["ids"]["src"])


def padded(rows: list[list[int]]) -> torch.Tensor:
    out = torch.full((len(rows), max(map(len, rows))), PAD)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row)
    return out


def sources(engine, lines) -> torch.Tensor:
    """Source ids as the engine builds them: its language code, the pieces, </s>."""
    return padded([[*engine.source_prefix, *ids] for ids in engine.tokenizer.encode_src(lines)])


def their_log_probs(hf, src, tgt, src_table, tgt_table) -> torch.Tensor:
    """transformers' model `hf`'s log-probabilities of targets `tgt` given `src` (both in
    translator's ids, read through the id tables), over translator's target ids."""
    theirs = hf(
        input_ids=src_table[src],
        attention_mask=(src != PAD).long(),
        decoder_input_ids=tgt_table[tgt[:, :-1]],
    ).logits
    return torch.log_softmax(theirs.float(), -1)[..., tgt_table]
