"""Control tokens come only from options: a text that spells a corpus tag (`<bt>`) or a
target-language tag (`<2fr>`) is encoded as text, in translation, in training data and in
an exported model, while the options still put the tags' ids before a source."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sentencepiece as spm

from translator.config import TokenizerConfig
from translator.data import encode
from translator.data.tokenizer import Tokenizer, fingerprint
from translator.decode.translator import source_ids
from translator.specials import EOS

TAGS = ("<bt>", "<2fr>", "<2de>")
WORDS = ["Hund", "Katze", "läuft", "springt", "im", "Garten", "über", "die", "Straße"]
PAIRS = [
    (f"{WORDS[i % 9]} {WORDS[(i * 5) % 9]} {WORDS[(i * 7) % 9]} {i % 10}.",
     f"dog cat runs {i % 7} <b> in the garden!")  # '<', '>', digits: the tags' characters
    for i in range(120)
]  # fmt: skip


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Tokenizer:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRANSLATOR_CACHE", str(tmp_path_factory.mktemp("cache")))
        return Tokenizer.train(PAIRS, TokenizerConfig(vocab_size=400), seed=1, symbols=TAGS)


def raw(data: bytes) -> spm.SentencePieceProcessor:
    """The model as trained, tags matched inside text (how it encoded before)."""
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(data)
    return sp


def tag_id(tok: Tokenizer, tag: str) -> int:
    return tok.tag_ids([tag])[0][0]


@pytest.mark.parametrize("tag", TAGS)
def test_a_tag_spelled_in_a_source_is_encoded_as_text(tagged, tag):
    ids = tagged.encode_src([f"Hund {tag} läuft"])[0]
    tags = {tag_id(tagged, t) for t in TAGS}
    assert not tags & set(ids)
    assert tag in tagged.src.decode(ids)  # the spelling survives as text
    assert tag_id(tagged, tag) in raw(tagged.src_bytes).encode(f"Hund {tag} läuft")  # it did not


def test_options_still_put_the_tags_ids_before_a_source(tagged):
    prefix = tagged.tag_prefix("<bt>", list(TAGS))
    assert prefix == [raw(tagged.src_bytes).piece_to_id("<bt>")]
    todo, ids = source_ids(tagged, ["<bt> Hund", " ", "<2fr>"], 100, prefix)
    assert todo == [0, 2]
    for row in ids:
        assert row[0] == prefix[0] and prefix[0] not in row[1:]
    assert set(tagged.never_output(list(TAGS))) == {tag_id(tagged, t) for t in TAGS}


def test_ordinary_text_and_the_stored_bytes_are_unchanged(tagged):
    before = raw(tagged.src_bytes)
    lines = [s for pair in PAIRS for s in pair] + ["Ein ganz neuer Satz, mit Zeichen: ©"]
    assert tagged.encode_src(lines) == [ids + [EOS] for ids in before.encode(lines)]
    assert tagged.src.get_piece_size() == before.get_piece_size()
    pieces = [before.id_to_piece(i) for i in range(before.get_piece_size())]
    assert [tagged.src.id_to_piece(i) for i in range(len(pieces))] == pieces
    again = Tokenizer.from_state(tagged.state())
    assert again.src_bytes == tagged.src_bytes  # checkpoints keep the trained bytes
    assert again.fingerprint() == fingerprint(tagged.src_bytes, None)


def test_training_data_keeps_its_ids_and_never_reads_a_tag_from_text(tagged):
    rules = encode.Rules(max_words=100, max_len_ratio=None, dedupe=False, dtype="int32")
    encode.init_worker(tagged.src_bytes, None, rules)
    chunk = encode.encode_chunk(PAIRS)
    before = raw(tagged.src_bytes)
    want = np.concatenate([before.encode(s, add_eos=True) for s, _ in PAIRS])
    assert np.array_equal(chunk.src, want)  # the same corpus, the same ids as before
    spelled = encode.encode_chunk([("Hund <bt> <2fr>", "dog <2de>")])
    tags = [tag_id(tagged, t) for t in TAGS]
    assert not np.isin(spelled.src, tags).any() and not np.isin(spelled.tgt, tags).any()


def test_an_exported_model_reads_tags_in_text_as_text(tagged, tmp_path):
    from translator.engines.ct2_folder import folder_tokenizer
    from translator.engines.export import SOURCE_SPM

    (tmp_path / SOURCE_SPM).write_bytes(tagged.src_bytes)
    meta = {"source": SOURCE_SPM, "target": None, "sha256": tagged.fingerprint()}
    tok = folder_tokenizer(tmp_path, json.loads(json.dumps({"tokenizer": meta})))
    assert tok.encode_src(["Hund <bt>"]) == tagged.encode_src(["Hund <bt>"])
    assert tag_id(tagged, "<bt>") not in tok.encode_src(["Hund <bt>"])[0]
