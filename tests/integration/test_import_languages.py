"""`translator import --src-lang/--tgt-lang`: the default languages of a model of language
codes; a model whose tokenizer names no target (NLLB-200's) has none, so a call that names
none is a one-line error, not a translation into an arbitrary language."""

import pytest
from commandline import run_cli
from pretrained import marian_folder, one_line_error
from pretrained_m2m100 import LANGUAGES, nllb_folder

from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def unnamed(tmp_path_factory):
    """An NLLB folder whose tokenizer_config.json names no tgt_lang, as NLLB-200's."""
    return nllb_folder(tmp_path_factory.mktemp("nllb") / "hf", tgt_lang=None)


def translate(capsys, path, *options) -> tuple[int, str, str]:
    return run_cli(
        capsys, "translate", "--checkpoint", str(path), *options, "Ein Hund läuft im Park."
    )


def test_without_a_target_import_says_so_and_translate_asks_for_one(unnamed, tmp_path, capsys):
    out = tmp_path / "m.pt"
    code, said, err = run_cli(capsys, "import", str(unnamed), "--output", str(out))
    assert code == 0, err
    assert "names no target language: give --tgt-lang" in said
    code, _, err = translate(capsys, out)
    line = one_line_error(code, err, "several languages", "--tgt-lang")
    assert all(lang in line for lang in LANGUAGES)
    code, _, err = translate(capsys, out, "--tgt-lang", "fra_Latn")
    assert code == 0, err
    code, said, err = run_cli(capsys, "info", str(out))
    assert code == 0, err
    assert "languages: deu_Latn -> none named (give --tgt-lang)" in said
    assert f"language codes: 3: {', '.join(sorted(LANGUAGES))}" in said
    # the same model imported with a default target translates into it unasked
    named = tmp_path / "fr.pt"
    code, said, err = run_cli(
        capsys, "import", str(unnamed), "--output", str(named), "--tgt-lang", "fra_Latn"
    )
    assert code == 0 and "names no target" not in said, err
    ckpt = Checkpoint.load(named)
    assert ckpt.config["data"]["tgt_lang"] == "fra_Latn"
    french = (ckpt.source["languages"]["fra_Latn"],)
    assert load_engine(named, "cpu").target_start == french
    assert load_engine(out, "cpu", tgt_lang="fra_Latn").target_start == french
    assert translate(capsys, named)[1] == translate(capsys, out, "--tgt-lang", "fra_Latn")[1]


@pytest.mark.parametrize("src, tgt", [("fra_Latn", "deu_Latn"), ("fr", "de-AT")])
def test_import_sets_the_source_language_too(unnamed, tmp_path, capsys, src, tgt):
    """The languages are given as the model's codes or in other spellings (`fr`, `de-AT`
    name fra_Latn and deu_Latn); the checkpoint keeps the model's own codes."""
    out = tmp_path / "m.pt"
    args = ["import", str(unnamed), "--output", str(out), "--src-lang", src]
    code, _, err = run_cli(capsys, *args, "--tgt-lang", tgt)
    assert code == 0, err
    data = Checkpoint.load(out).config["data"]
    assert (data["src_lang"], data["tgt_lang"]) == ("fra_Latn", "deu_Latn")
    engine, codes = load_engine(out, "cpu"), Checkpoint.load(out).source["languages"]
    assert engine.source_prefix[0] == codes["fra_Latn"]
    assert engine.target_start == (codes["deu_Latn"],)


@pytest.mark.parametrize(
    "options, needles",
    [
        (["--tgt-lang", "klingon"], ["--tgt-lang klingon", "not a language", *LANGUAGES]),
        (["--src-lang", "ces"], ["--src-lang ces", "not a language"]),
        (["--src-lang", "fra_Latn", "--tgt-lang", "fra_Latn"], ["--src-lang/--tgt-lang"]),
    ],
)
def test_a_language_the_model_lacks_is_one_line_and_writes_nothing(
    unnamed, tmp_path, capsys, options, needles
):
    out = tmp_path / "m.pt"
    code, _, err = run_cli(capsys, "import", str(unnamed), "--output", str(out), *options)
    one_line_error(code, err, *needles)
    assert not out.exists()


def test_a_model_of_one_direction_has_no_languages_to_choose(tmp_path, capsys):
    folder = marian_folder(tmp_path / "marian")
    out = tmp_path / "m.pt"
    code, _, err = run_cli(capsys, "import", str(folder), "--output", str(out), "--tgt-lang", "fr")
    one_line_error(code, err, "--src-lang/--tgt-lang", "no language codes")
    assert not out.exists()
