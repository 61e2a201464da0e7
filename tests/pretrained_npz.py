"""Native Marian models the import tests make: an .npz with the array names and the
`special:model.yml` entry Marian writes, random weights, decoder.yml, vocabulary .yml files
whose ids are not sentencepiece's (</s> 0, <unk> 1, then the pieces shuffled) and locally
trained sentencepiece models; and the OPUS-MT release .zip of such a folder."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
from pretrained import demo_pairs, marian_vocab, train_spm

D, HEADS, FF, LAYERS = 32, 4, 64, 2
NPZ = "opus.spm32k-spm32k.transformer-align.model1.npz.best-perplexity.npz"


def vocab_yml(vocab: dict[str, int]) -> str:
    """A vocabulary as Marian writes it: `piece: id` lines, a piece YAML would read otherwise
    in double quotes (only \\ and " escaped, as CTranslate2's reader expects)."""
    lines = []
    for piece, i in sorted(vocab.items(), key=lambda item: item[1]):
        plain = piece.replace("\u2581", "").isalnum() and not piece[:1].isdigit()
        key = piece if plain else '"' + piece.replace("\\", "\\\\").replace('"', '\\"') + '"'
        lines.append(f"{key}: {i}\n")
    return "".join(lines)


def model_yml(**changes) -> dict:
    """The model.yml options Marian saves, for the test's sizes."""
    options = {
        "type": "transformer",
        "dim-emb": D,
        "enc-depth": LAYERS,
        "dec-depth": LAYERS,
        "transformer-heads": HEADS,
        "transformer-dim-ffn": FF,
        "transformer-ffn-depth": 2,
        "transformer-ffn-activation": "swish",
        "transformer-preprocess": "",
        "transformer-postprocess": "dan",
        "transformer-postprocess-emb": "d",
        "transformer-postprocess-top": "",
        "transformer-decoder-autoreg": "self-attention",
        "transformer-no-projection": False,
        "transformer-guided-alignment-layer": "last",
        "transformer-train-positions": False,
        "transformer-dropout": 0.1,
        "tied-embeddings": False,
        "tied-embeddings-src": False,
        "tied-embeddings-all": True,
        "right-left": False,
        "lemma-dim-emb": 0,
        "version": "v1.7.6 02bf2b9 2019-03-09",
    }
    options.update(changes)
    return options


def random_arrays(
    options: dict, src_size: int, tgt_size: int, seed: int, eos: int, eos_bias: float
) -> dict:
    """Marian's arrays: matrices [in, out] (x @ W + b), biases and norms [1, dim]."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}

    def rand(*shape, scale=0.3):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    pre = "n" in options["transformer-preprocess"]
    suffix = "_pre" if pre else ""

    def norm(name):
        out[f"{name}_ln_scale{suffix}"] = 1.0 + rand(1, D, scale=0.1)
        out[f"{name}_ln_bias{suffix}"] = rand(1, D, scale=0.1)

    def attention(name):
        for part in "qkvo":
            out[f"{name}_W{part}"], out[f"{name}_b{part}"] = rand(D, D), rand(1, D, scale=0.1)
        norm(f"{name}_Wo")

    def ffn(name):
        out[f"{name}_W1"], out[f"{name}_b1"] = rand(D, FF), rand(1, FF, scale=0.1)
        out[f"{name}_W2"], out[f"{name}_b2"] = rand(FF, D), rand(1, D, scale=0.1)
        norm(f"{name}_ffn")

    for i in range(1, LAYERS + 1):
        attention(f"encoder_l{i}_self")
        ffn(f"encoder_l{i}_ffn")
        attention(f"decoder_l{i}_self")
        attention(f"decoder_l{i}_context")
        ffn(f"decoder_l{i}_ffn")
    if options["tied-embeddings-all"] or options["tied-embeddings-src"]:
        out["Wemb"] = rand(src_size, D)
    else:
        out["encoder_Wemb"], out["decoder_Wemb"] = rand(src_size, D), rand(tgt_size, D)
    if not (options["tied-embeddings-all"] or options["tied-embeddings"]):
        out["decoder_ff_logit_out_W"] = rand(D, tgt_size, scale=0.15)
    bias = rand(1, tgt_size, scale=1.0)
    bias[0, eos] += eos_bias  # outputs of varied lengths
    out["decoder_ff_logit_out_b"] = bias
    if pre and options.get("transformer-postprocess-top") == "n":
        for side in ("encoder", "decoder"):
            out[f"{side}_top_ln_scale"] = 1.0 + rand(1, D, scale=0.1)
            out[f"{side}_top_ln_bias"] = rand(1, D, scale=0.1)
    return out


def with_model_yml(arrays: dict, options: dict) -> dict:
    """The arrays and `special:model.yml`: the options' YAML text, NUL-terminated, as int8."""
    import yaml

    text = yaml.safe_dump(options, sort_keys=False).encode("utf-8") + b"\0"
    return {**arrays, "special:model.yml": np.frombuffer(text, dtype=np.int8)}


def marian_npz_folder(
    folder: Path, separate_vocabs: bool = False, seed: int = 0, eos_bias: float = 5.0, **changes
):
    """A native Marian model folder; `changes`: model.yml options; `separate_vocabs`: a
    vocabulary per side (different sizes), which needs tied-embeddings-all off."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    options = model_yml(**changes)
    pairs = demo_pairs()["train"]
    src_spm = train_spm([s for s, _ in pairs], 150)
    tgt_spm = train_spm([t for _, t in pairs], 120)

    def native(models):  # Marian's own vocabularies have no <pad>
        return {p: i for p, i in marian_vocab(models, seed).items() if p != "<pad>"}

    if separate_vocabs:
        vocabs = {"vocab.src.yml": native([src_spm]), "vocab.trg.yml": native([tgt_spm])}
    else:
        vocabs = {"opus.spm32k-spm32k.vocab.yml": native([src_spm, tgt_spm])}
    names = list(vocabs)
    src_vocab, tgt_vocab = vocabs[names[0]], vocabs[names[-1]]
    options["dim-vocabs"] = [len(src_vocab), len(tgt_vocab)]
    eos = tgt_vocab["</s>"]
    arrays = random_arrays(options, len(src_vocab), len(tgt_vocab), seed, eos, eos_bias)
    np.savez(folder / NPZ, **with_model_yml(arrays, options))
    for name, vocab in vocabs.items():
        (folder / name).write_text(vocab_yml(vocab), encoding="utf-8")
    decoder = {
        "models": [NPZ],
        "vocabs": [names[0], names[-1]],
        "beam-size": 6,
        "normalize": 0.6,
        "word-penalty": 0,
        "mini-batch": 16,
        "maxi-batch": 100,
        "maxi-batch-sort": "src",
        "relative-paths": False,
    }
    (folder / "decoder.yml").write_text(yaml.safe_dump(decoder, sort_keys=False), encoding="utf-8")
    (folder / "source.spm").write_bytes(src_spm)
    (folder / "target.spm").write_bytes(tgt_spm)
    card = "# opus-2020-02-26.zip\n\n* dataset: a random test model\n"
    card += "* source language(s): de\n* target language(s): en\n"
    (folder / "README.md").write_text(card, encoding="utf-8")
    (folder / "LICENSE").write_text("CC-BY 4.0 (test)\n")
    return folder


def release_zip(folder: Path, path: Path) -> Path:
    """The folder as an OPUS-MT release .zip (its files at the top of the archive)."""
    with zipfile.ZipFile(path, "w") as zf:
        for file in sorted(folder.iterdir()):
            zf.write(file, file.name)
    return path


def vocab_paths(folder: Path) -> list[str]:
    """The vocabularies decoder.yml names, source then target (CTranslate2's converter's
    argument)."""
    import yaml

    decoder = yaml.safe_load((folder / "decoder.yml").read_text())
    return [str(folder / name) for name in decoder["vocabs"]]


def rewrite_model_yml(folder: Path, **changes) -> None:
    """The folder's .npz with model.yml options changed (its arrays kept)."""
    import yaml

    with np.load(folder / NPZ) as npz:
        arrays = {k: npz[k] for k in npz.files}
    options = yaml.safe_load(arrays.pop("special:model.yml")[:-1].tobytes())
    options.update(changes)
    np.savez(folder / NPZ, **with_model_yml(arrays, options))
