"""The Hugging Face export of an imported NLLB or M2M100 model keeps the released files of
the tokenizer's ids: NLLB-200's tokenizer.json numbers the language codes before <mask>,
where transformers' rebuild from the sentencepiece model puts them after it (every code
read as its neighbour's row), and M2M100Tokenizer cannot load without its vocab.json."""

import json

import pytest
from commandline import run_cli
from pretrained import one_line_error
from pretrained_m2m100 import LANGUAGES, m2m100_folder, nllb_folder

from translator.models.checkpoint import Checkpoint

transformers = pytest.importorskip("transformers")
LINE = "Ein Hund läuft im Park."


def codes_before_mask(folder):
    """`folder`'s tokenizer.json with NLLB-200's order: the codes right after the pieces,
    then <mask>."""
    path = folder / "tokenizer.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    first = min(a["id"] for a in data["added_tokens"] if a["content"] in ("<mask>", *LANGUAGES))
    order = [*LANGUAGES, "<mask>"]
    for token in data["added_tokens"]:
        if token["content"] in order:
            token["id"] = first + order.index(token["content"])
    path.write_text(json.dumps(data), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    return codes_before_mask(nllb_folder(tmp_path_factory.mktemp("nllb") / "hf", tgt_lang=None))


def ids(folder) -> dict[str, int]:
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    return {t: tok.convert_tokens_to_ids(t) for t in (*LANGUAGES, "<mask>")}


def test_the_export_reads_each_code_as_the_released_tokenizer_does(released, tmp_path, capsys):
    ckpt, out = tmp_path / "m.pt", tmp_path / "hf"
    args = ["import", str(released), "--output", str(ckpt), "--tgt-lang", "fra_Latn"]
    assert run_cli(capsys, *args)[0] == 0
    code, _, err = run_cli(capsys, "export", "--checkpoint", str(ckpt), "--format",
                           "huggingface", "--output", str(out))  # fmt: skip
    assert code == 0, err
    assert ids(out) == ids(released)
    saved = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert (saved["src_lang"], saved["tgt_lang"]) == ("deu_Latn", "fra_Latn")
    # imported again, the export translates as the checkpoint it came from, unasked
    again = tmp_path / "again.pt"
    assert run_cli(capsys, "import", str(out), "--output", str(again))[0] == 0
    ours = run_cli(capsys, "translate", "--checkpoint", str(ckpt), LINE)
    assert ours[0] == 0 and run_cli(capsys, "translate", "--checkpoint", str(again), LINE) == ours


def test_without_the_released_tokenizer_files_the_export_is_refused_where_codes_would_move(
    released, tmp_path, capsys
):
    ckpt = tmp_path / "m.pt"
    assert run_cli(capsys, "import", str(released), "--output", str(ckpt))[0] == 0
    saved = Checkpoint.load(ckpt)
    del saved.source["tokenizer_files"]
    saved.save(ckpt)
    code, _, err = run_cli(capsys, "export", "--checkpoint", str(ckpt), "--format",
                           "huggingface", "--output", str(tmp_path / "hf"))  # fmt: skip
    one_line_error(code, err, "tokenizer.json", "import the model folder again")
    assert not (tmp_path / "hf").exists()


def test_an_m2m100_export_loads_its_tokenizer_with_the_released_ids(tmp_path, capsys):
    released = m2m100_folder(tmp_path / "m2m100")
    ckpt, out = tmp_path / "m.pt", tmp_path / "hf"
    assert run_cli(capsys, "import", str(released), "--output", str(ckpt))[0] == 0
    code, _, err = run_cli(capsys, "export", "--checkpoint", str(ckpt), "--format",
                           "huggingface", "--output", str(out))  # fmt: skip
    assert code == 0, err
    theirs, ours = (transformers.AutoTokenizer.from_pretrained(f) for f in (released, out))
    assert ours.get_vocab() == theirs.get_vocab()
    assert ours(LINE).input_ids == theirs(LINE).input_ids


def test_a_language_set_on_export_is_read_as_the_models_code(released, tmp_path, capsys):
    """`--set data.tgt_lang=fr` names fra_Latn, as `translate --tgt-lang fr` does; a code the
    model lacks, or a change of the model's layout, is one line and writes nothing."""
    ckpt, out = tmp_path / "m.pt", tmp_path / "hf"
    assert run_cli(capsys, "import", str(released), "--output", str(ckpt))[0] == 0
    export = ["export", "--checkpoint", str(ckpt), "--format", "huggingface", "--output"]
    code, _, err = run_cli(capsys, *export, str(out), "--set", "data.tgt_lang=fr")
    assert code == 0, err
    saved = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    generation = json.loads((out / "generation_config.json").read_text(encoding="utf-8"))
    assert saved["tgt_lang"] == "fra_Latn"
    assert generation["forced_bos_token_id"] == ids(released)["fra_Latn"]
    for setting, needles in [
        ("data.tgt_lang=xx_Latn", ["--set data.tgt_lang xx_Latn", "eng_Latn"]),
        ("model.d_model=64", ["--set 'model.d_model=64'", "export applies only data.*"]),
    ]:
        code, _, err = run_cli(capsys, *export, str(tmp_path / "no"), "--set", setting)
        one_line_error(code, err, *needles)
        assert not (tmp_path / "no").exists()
