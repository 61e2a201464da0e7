"""`translator export --format argos` (translator/engines/export_argos.py): the package that
argostranslate installs with `install_from_path`, then translates with as `translator
translate` does with the CTranslate2 export: greedy (ARGOS_BEAM_SIZE 1), float32 (argos's
default compute type "auto" would run the float32 weights in int8 on this CPU), at
CTranslate2's length cap of 256 tokens, which argostranslate keeps and translator is given.

argostranslate splits text into sentences with a MiniSBD model it downloads on first use,
which cannot happen here: the tests give it one sentence per text instead (the one part of
argostranslate's path that they replace)."""

import json
import shutil
import zipfile

import pytest
from commandline import run_cli
from pretrained import demo_pairs, marian_folder
from util import user_error

from translator.engines.export_argos import export_argos
from translator.models.checkpoint import Checkpoint

SOURCES = [source for source, _ in demo_pairs()["test"][:12]]  # the demo corpus: in domain
CAP = ["--beam", "1", "--max-len-a", "0", "--max-len-b", "256"]  # argostranslate's cap


@pytest.fixture(scope="module")
def argos(tmp_path_factory):
    """`translate(package, texts)`: argostranslate, its folders in a temporary one, with
    `package` the one installed package."""
    root = tmp_path_factory.mktemp("argos")
    packages = root / "packages"
    with pytest.MonkeyPatch.context() as mp:
        # its settings read these (and make the folders) when first imported
        for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            mp.setenv(name, str(root / name))
        mp.setenv("ARGOS_PACKAGES_DIR", str(packages))
        from argostranslate import package, sbd, settings, translate

        # as the environment says, also where another test imported argostranslate first
        mp.setattr(settings, "package_data_dir", packages)
        mp.setattr(settings, "package_dirs", [packages])
        mp.setattr(settings, "beam_size", 1)
        mp.setattr(settings, "compute_type", "float32")
        mp.setattr(sbd.MiniSBDSentencizer, "split_sentences", lambda self, text: [text])

        def run(path, texts, compute_type="float32"):
            settings.compute_type = compute_type  # put back by `mp` at the end
            shutil.rmtree(packages, ignore_errors=True)
            packages.mkdir()
            translate.installed_translates.clear()  # its cache of loaded models, by pair
            package.install_from_path(path)
            return [translate.translate(text, "de", "en") for text in texts]

        yield run


def ct2_translations(capsys, checkpoint, folder, texts):
    code, out, err = run_cli(capsys, "export", "--checkpoint", str(checkpoint),
                             "--output", str(folder))  # fmt: skip
    assert code == 0, err
    code, out, err = run_cli(capsys, "translate", "--checkpoint", str(folder), *CAP, *texts)
    assert code == 0, err
    return out.splitlines()


def package_files(path):
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist() if not name.endswith("/")}


def test_argos_translates_as_translator(transformer, argos, tmp_path, capsys):
    checkpoint = transformer[0]
    code, line, err = run_cli(capsys, "export", "--checkpoint", str(checkpoint), "--format",
                              "argos", "--output", str(tmp_path / "de_en.argosmodel"))  # fmt: skip
    assert code == 0, err
    assert "de -> en" in line and str(tmp_path / "de_en.argosmodel") in line
    files = package_files(tmp_path / "de_en.argosmodel")
    meta = json.loads(files["translate-de_en-translator/metadata.json"])
    assert (meta["from_code"], meta["to_code"], meta["type"]) == ("de", "en", "translate")
    config = json.loads(files["translate-de_en-translator/model/config.json"])
    assert config["add_source_eos"] is True  # argostranslate passes no </s>
    expected = ct2_translations(capsys, checkpoint, tmp_path / "ct2", SOURCES)
    assert argos(tmp_path / "de_en.argosmodel", SOURCES) == expected
    assert all(expected) and len(set(expected)) > 1


def test_int8_package(transformer, argos, tmp_path, capsys):
    """int8 weights, run in int8 (as argostranslate's "auto" does where the CPU has int8
    instructions): translate as the int8 export does."""
    checkpoint = transformer[0]
    export_argos(checkpoint, tmp_path / "p.argosmodel", "int8", None)
    code, _, err = run_cli(capsys, "info", str(tmp_path / "p.argosmodel"))
    assert code == 2 and "p.argosmodel: an Argos Translate package" in err, err
    code, _, err = run_cli(capsys, "export", "--checkpoint", str(checkpoint), "--output",
                           str(tmp_path / "ct2"), "--quantization", "int8")  # fmt: skip
    assert code == 0, err
    code, out, err = run_cli(capsys, "translate", "--checkpoint", str(tmp_path / "ct2"), *CAP,
                             *SOURCES)  # fmt: skip
    assert code == 0, err
    assert argos(tmp_path / "p.argosmodel", SOURCES, "int8") == out.splitlines()


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    """A tiny imported Marian model with a sentencepiece model per side, its licence and card:
    {positions: checkpoint} with its 128 positions, and with 512 (set before the import:
    the table is computed, not stored), above argostranslate's cap of 256."""
    from translator.pretrained import import_pretrained

    root = tmp_path_factory.mktemp("marian")
    folder = marian_folder(root / "hf")
    import_pretrained(str(folder), root / "128.pt")
    config = json.loads((folder / "config.json").read_text())
    config["max_position_embeddings"] = 512
    (folder / "config.json").write_text(json.dumps(config))
    import_pretrained(str(folder), root / "512.pt")
    return folder, {128: root / "128.pt", 512: root / "512.pt"}


def test_separate_subword_models(marian, argos, tmp_path, capsys):
    """The package holds the source sentencepiece model, and the target pieces decode to the
    same text; the licence and card travel. argostranslate never gives an empty output
    (CTranslate2's default min_decoding_length of 1) and translator's search may: those
    sentences are left out."""
    folder, checkpoints = marian
    assert Checkpoint.load(checkpoints[512]).tokenizer["tgt"] is not None  # two models
    export_argos(checkpoints[512], tmp_path / "m.argosmodel", "float32", None)
    files = package_files(tmp_path / "m.argosmodel")
    assert files["translate-de_en-translator/LICENSE"] == (folder / "LICENSE").read_bytes()
    assert "A random test model." in files["translate-de_en-translator/README.md"].decode()
    assert (
        files["translate-de_en-translator/sentencepiece.model"]
        == (folder / "source.spm").read_bytes()
    )
    expected = ct2_translations(capsys, checkpoints[512], tmp_path / "ct2", SOURCES)
    found = argos(tmp_path / "m.argosmodel", SOURCES)
    kept = [n for n, text in enumerate(expected) if text]
    assert len(kept) >= len(SOURCES) - 2
    assert [found[n] for n in kept] == [expected[n] for n in kept]


def test_short_position_table(marian, argos, tmp_path, capsys):
    """A model of 128 positions: the package's tables are extended to argostranslate's
    lengths (CTranslate2 would stop with an error at position 128), so the outputs that
    translator cuts at the model's cap run on there."""
    checkpoint = marian[1][128]
    export_argos(checkpoint, tmp_path / "m.argosmodel", "float32", None)
    expected = ct2_translations(capsys, checkpoint, tmp_path / "ct2", SOURCES)
    found = argos(tmp_path / "m.argosmodel", SOURCES)
    assert all(f.startswith(e) for f, e in zip(found, expected))
    assert any(len(f) > len(e) for f, e in zip(found, expected) if e)  # past position 128


def test_output_refused_unless_ours(three_steps, tmp_path):
    foreign = tmp_path / "notes.argosmodel"
    foreign.write_text("my notes\n")
    message = user_error(export_argos, three_steps, foreign, "float32", None)
    assert str(foreign) in message and "refusing" in message
    assert foreign.read_text() == "my notes\n"
    # another program's argos package (a zip without translator's key) is not replaced either
    other = tmp_path / "other.argosmodel"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("translate-de_en-translator/metadata.json", json.dumps({"from_code": "de"}))
    before = other.read_bytes()
    user_error(export_argos, three_steps, other, "float32", None)
    assert other.read_bytes() == before
    assert ".argosmodel" in user_error(export_argos, three_steps, tmp_path / "p.zip", "int8", None)
    # translator's own package is replaced, and nothing is left beside it
    ours = tmp_path / "ours.argosmodel"
    export_argos(three_steps, ours, "float32", None)
    export_argos(three_steps, ours, "int8", None)
    assert (
        json.loads(package_files(ours)["translate-de_en-translator/metadata.json"])["translator"][
            "quantization"
        ]
        == "int8"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["notes.argosmodel", "other.argosmodel", "ours.argosmodel"]
    )


def test_languages_and_refused_models(three_steps, tmp_path):
    out = tmp_path / "p.argosmodel"
    export_argos(three_steps, out, "float32", ["data.src_lang=fr", "data.tgt_lang=es"])
    assert "translate-fr_es-translator/metadata.json" in package_files(out)
    raw = Checkpoint.load(three_steps)
    data = {"dir": str(tmp_path), "directions": ["de-en", "de-fr"]}
    raw.config["data"] = {**{k: v for k, v in raw.config["data"].items() if k != "dataset"}, **data}
    raw.save(tmp_path / "multi.pt")
    message = user_error(export_argos, tmp_path / "multi.pt", out, "float32", None)
    assert "de-en, de-fr" in message
    raw = Checkpoint.load(three_steps)
    raw.source = {"format": "test", "languages": {"de": 4, "en": 5}}
    raw.save(tmp_path / "codes.pt")
    assert "language codes" in user_error(export_argos, tmp_path / "codes.pt", out, "float32", None)
    assert "float16" in user_error(export_argos, three_steps, out, "float16", None)
    # a recurrent model is refused for its family first, whatever the file is called
    raw = Checkpoint.load(three_steps)
    raw.config["model"]["type"] = "lstm"
    raw.save(tmp_path / "lstm.pt")
    message = user_error(export_argos, tmp_path / "lstm.pt", tmp_path / "p.zip", "float32", None)
    assert "model.type lstm cannot be exported to argos" in message


def test_banned_outputs(three_steps, tmp_path):
    """A briefly trained model prefers tokens that translator's search never outputs (<s>
    here): the package's model, called as argostranslate calls it (pieces without </s>, no
    bans), gives what the export gives with translator's bans and </s>."""
    import ctranslate2
    import sentencepiece as spm

    from translator.engines.export import export_checkpoint

    export_argos(three_steps, tmp_path / "p.argosmodel", "float32", None)
    with zipfile.ZipFile(tmp_path / "p.argosmodel") as zf:
        zf.extractall(tmp_path / "unzipped")
    package = tmp_path / "unzipped" / "translate-de_en-translator"
    export_checkpoint(three_steps, "ctranslate2", "float32", tmp_path / "ct2")
    pieces = spm.SentencePieceProcessor(model_file=str(package / "sentencepiece.model"))
    sources = [pieces.encode(text, out_type=str) for text in SOURCES[:4]]
    settings = {"beam_size": 1, "max_decoding_length": 40}
    found = ctranslate2.Translator(str(package / "model")).translate_batch(sources, **settings)
    export = ctranslate2.Translator(str(tmp_path / "ct2"))
    plain = export.translate_batch([s + ["</s>"] for s in sources], **settings)
    banned = [["<pad>"], ["<s>"]]
    ours = export.translate_batch([s + ["</s>"] for s in sources], suppress_sequences=banned,
                                  disable_unk=True, **settings)  # fmt: skip
    assert any("<s>" in r.hypotheses[0] for r in plain)  # what the bias is there for
    assert [r.hypotheses for r in found] == [r.hypotheses for r in ours]
