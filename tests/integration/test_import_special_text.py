"""The text of an imported NLLB model's output ids, as translate, eval and serve show it: the
tokens transformers' decode(skip_special_tokens=True) drops (a language code, an embedding
row the tokenizer has no piece for) are not in it, and the rest of the text is
transformers'."""

import pytest
from imported_m2m100 import import_kind, table
from pretrained import demo_pairs

from translator.engines.load import load_engine

pytest.importorskip("transformers")


def test_nllb_text_drops_codes_and_extra_rows(tmp_path_factory):
    imported = import_kind("nllb", tmp_path_factory)
    tok = imported.tok
    pieces = tok(["Guten Morgen, wie geht es dir heute"])["input_ids"][0]
    words = [i for i in pieces if i not in tok.all_special_ids]
    ids = table(imported.path).tolist()
    extra, code = max(ids), tok.convert_tokens_to_ids(imported.piece)
    assert extra >= len(tok) and code != tok.unk_token_id  # a row without a piece; a code
    middle = len(words) // 2
    hf_ids = [code, *words[:middle], extra, code, *words[middle:], extra]
    ours = {hf: t for t, hf in reversed(list(enumerate(ids)))}

    engine = load_engine(imported.path, "cpu")
    text = engine.tokenizer.decode_tgt([[ours[i] for i in hf_ids]])[0]
    assert text == tok.decode(hf_ids, skip_special_tokens=True)
    assert imported.piece not in text and "<" not in text


@pytest.mark.parametrize("hidden", [["x"], [2], [10**6], "5"])
def test_a_hidden_list_that_is_no_list_of_target_ids_is_one_line(tmp_path_factory, hidden):
    from translator.data.vocab import tokenizer_from_state
    from translator.errors import UserError
    from translator.models.checkpoint import Checkpoint

    state = Checkpoint.load(import_kind("nllb", tmp_path_factory).path).tokenizer
    assert tokenizer_from_state(state).tgt.hidden  # the import lists some
    bad = {**state, "vocab": {**state["vocab"], "hidden": hidden}}
    with pytest.raises(UserError, match=r"^key 'tokenizer\.vocab\.hidden' must list target ids"):
        tokenizer_from_state(bad)


def test_confidence_of_an_imported_model_reads_its_pieces_through_the_table(tmp_path_factory):
    """Confidence's piece scores come from the sentencepiece model under the table's ids:
    a text piece gets the model's own score, the specials and hidden codes none."""
    from translator.decode.confidence import piece_scores

    imported = import_kind("nllb", tmp_path_factory)
    engine = load_engine(imported.path, "cpu", src_lang=imported.src, tgt_lang=imported.targets[0])
    tgt = engine.tokenizer.tgt
    words = tgt.encode("Guten Morgen")
    sp = tgt.sp
    code = next(iter(tgt.hidden))
    scores = piece_scores(tgt, [2, *words, code, 3])
    assert scores == [sp.GetScore(sp.piece_to_id(tgt.pieces[i])) for i in words]
    lines = [s for s, _ in demo_pairs()["test"]][:8]  # (a random model: any outputs)
    for (best,) in engine.translate(lines, engine.request(confidence=True)):
        assert 0.0 <= best.confidence <= 1.0
        assert len(best.word_confidence) == len(best.text.split())
