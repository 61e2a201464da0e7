"""Speed of an imported Marian model: transformers' generate, translator's PyTorch engine and
its CTranslate2 int8 export, beam 5, on the same batches of the same sentences, in one run.

    python scripts/bench/bench_pretrained.py            # the issue's figures: base size, 2 threads
    python scripts/bench/bench_pretrained.py --sentences 16 --layers 1 --d-model 64 \
        --heads 2 --ffn 128 --vocab 4000 --spm-size 500 --length 8   # a quick check

The model is a MarianMTModel of opus-mt-de-en's shape (6+6 layers, d_model 512, 8 heads, ffn
2048, swish, 58,101 vocabulary entries, tied embeddings) with random weights, built here:
no released weights can be downloaded. Its subword models are sentencepiece models trained
on the Multi30k training text (--spm-size pieces a side; Multi30k is too small for 58k real
pieces), and its vocab.json holds their pieces then filler entries up to --vocab, with
<pad> last as Marian's, so the embedding and output layers have the released model's size.
`translator import` reads the folder and `translator export` writes the CTranslate2 folder
of the import (int8 unless --quantization says otherwise).

Random weights rarely end a sentence, so every engine writes the same number of tokens,
--length, on every sentence: transformers with min_new_tokens = max_new_tokens = --length;
CTranslate2 with min_decoding_length = max_decoding_length = --length; translator with
max_len_a 0 and max_len_b --length, </s> held to -10,000 until the step after them, where
its search forces it (the search's mask of specials is wrapped here), so its best output
is the best of --length tokens as the others'. Its </s> is a decoder step of its own, and
counts as a target token (as bench_decode.py counts it): --length + 1 tokens a sentence
for translator, --length for the others. The sentences, sorted by length, are cut into the
same batches of --batch-size for all three; the first batch runs once untimed. Agreement
is the share of sentences whose tokens are all transformers' own. translator's PyTorch
engine is timed as a user calls it, text in and text out (its sentencepiece work counted);
transformers and CTranslate2 are given the source ids and pieces and give ids back;
CTranslate2 runs as translator's engine runs an export, a worker a core.

One JSON line is appended to --output: the machine (CPU model, AVX-512 or not), the date,
the settings, target tokens/s of each engine, the ratios to transformers (targets: 1.5x for
the PyTorch engine, 5x for int8 CTranslate2) and the agreement.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gzip
import io
import json
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "multi30k"
BAN = -1.0e4  # </s> before the fixed length: finite, so the forced end at the limit scores


def read_lines(path: Path, limit: int | None = None) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    return lines[:limit] if limit else lines


def train_spm(lines: list[str], size: int) -> bytes:
    """A unigram sentencepiece model with its default ids (<unk> 0, <s> 1, </s> 2)."""
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=out,
        vocab_size=size,
        hard_vocab_limit=False,
        num_threads=2,
        minloglevel=2,
    )
    return out.getvalue()


def marian_folder(folder: Path, args) -> Path:
    """A saved MarianMTModel with random weights, its subword models and a vocab.json of
    `args.vocab` entries (module docstring)."""
    import sentencepiece as spm
    from transformers import MarianConfig, MarianMTModel

    models = [
        train_spm(read_lines(DATA / f"train.{lang}.gz"), args.spm_size) for lang in ("de", "en")
    ]
    pieces: list[str] = []
    for data in models:
        sp = spm.SentencePieceProcessor(model_proto=data)
        pieces += [sp.id_to_piece(i) for i in range(3, sp.get_piece_size())]
    pieces = list(dict.fromkeys(p for p in pieces if p not in ("</s>", "<unk>", "<pad>")))
    fill = args.vocab - 3 - len(pieces)
    if fill < 0:
        raise SystemExit(f"--vocab {args.vocab} is below the {len(pieces) + 3} real entries")
    entries = ["</s>", "<unk>", *pieces, *(f"▁filler{i}" for i in range(fill)), "<pad>"]
    vocab = {p: i for i, p in enumerate(entries)}
    config = MarianConfig(
        vocab_size=len(vocab),
        d_model=args.d_model,
        encoder_layers=args.layers,
        decoder_layers=args.layers,
        encoder_attention_heads=args.heads,
        decoder_attention_heads=args.heads,
        encoder_ffn_dim=args.ffn,
        decoder_ffn_dim=args.ffn,
        activation_function="swish",
        max_position_embeddings=512,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["</s>"],
        decoder_start_token_id=vocab["<pad>"],
        scale_embedding=True,
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
        init_std=args.init_std,
    )
    torch.manual_seed(args.seed)
    MarianMTModel(config).save_pretrained(folder)
    (folder / "source.spm").write_bytes(models[0])
    (folder / "target.spm").write_bytes(models[1])
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tok = {"source_lang": "de", "target_lang": "en", "separate_vocabs": False}
    (folder / "tokenizer_config.json").write_text(json.dumps(tok), encoding="utf-8")
    return folder


def machine() -> dict:
    """The CPU's model name and whether it has AVX-512 (lscpu, else /proc/cpuinfo)."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    info = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        info.setdefault(key.strip().lower(), value.strip())
    flags = info.get("flags", "").split()
    return {
        "cpu": info.get("model name", platform.processor() or "?"),
        "avx512": any(f.startswith("avx512") for f in flags),
        "avx512_flags": sorted(f for f in flags if f.startswith("avx512")),
        "cpus": len(os.sched_getaffinity(0)),
    }


@contextlib.contextmanager
def eos_held_back():
    """translator's search, inside: </s> held to BAN at every step; the step after the limit
    forces it (rules.force_eos keeps its value), so each output has exactly the limit's
    tokens. The search's own mask is back after."""
    from translator.decode import loop
    from translator.specials import EOS

    masked = loop.mask_specials

    def mask(logp, allow_unk, never=()):
        logp = masked(logp, allow_unk, never)
        logp[:, EOS] = BAN
        return logp

    loop.mask_specials = mask
    try:
        yield
    finally:
        loop.mask_specials = masked


def timed(run, batches) -> tuple[list[list[int]], float]:
    """Every batch's outputs (Marian ids, best hypothesis) and the seconds of all batches,
    after one untimed run of the first; `run` takes a list of batches."""
    run(batches[:1])
    start = time.perf_counter()
    outputs = run(batches)
    return outputs, time.perf_counter() - start


def each(run):
    """A runner of one batch as a runner of a list of them, one after the other."""
    return lambda batches: [row for batch in batches for row in run(batch)]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=DATA / "test_2016_flickr.de.gz")
    ap.add_argument("--sentences", type=int, default=0, help="the first N only (0: all)")
    ap.add_argument("--layers", type=int, default=6, help="encoder and decoder layers each")
    ap.add_argument("--d-model", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--ffn", type=int, default=2048)
    ap.add_argument("--vocab", type=int, default=58101, help="vocab.json entries")
    ap.add_argument("--spm-size", type=int, default=8000, help="sentencepiece pieces a side")
    ap.add_argument("--length", type=int, default=24, help="target tokens of every output")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--quantization", default="int8", choices=["int8", "int8_float32", "float32"],
        help="of the CTranslate2 export (float32 checks the export: its outputs are transformers')",
    )  # fmt: skip
    ap.add_argument("--seed", type=int, default=1)
    # transformers' default 0.02 gives near-uniform outputs whose order any rounding flips;
    # wider weights give each step a clear best token, so agreement says something
    ap.add_argument("--init-std", type=float, default=0.3, help="random weights' deviation")
    ap.add_argument("--work", type=Path, default=None, help="folder for the models (temporary)")
    ap.add_argument("--output", type=Path, default=ROOT / "results" / "pretrained_speed.jsonl")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.work is None:
        with tempfile.TemporaryDirectory(prefix="bench-pretrained-") as work:
            row = bench(args, Path(work))
    else:
        args.work.mkdir(parents=True, exist_ok=True)
        row = bench(args, args.work)
    print(json.dumps(row), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
    return row


def bench(args, work: Path) -> dict:
    import ctranslate2
    import transformers

    from translator.engines.export import export_checkpoint
    from translator.engines.load import load_engine
    from translator.models.checkpoint import Checkpoint
    from translator.pretrained import import_pretrained

    built = time.perf_counter()
    folder = marian_folder(work / "hf", args)
    import_pretrained(str(folder), work / "imported.pt")
    export_checkpoint(work / "imported.pt", "ctranslate2", args.quantization, work / "ct2")
    built = time.perf_counter() - built
    torch.set_num_threads(args.threads)  # (the export's converter may change it)

    table = torch.tensor(Checkpoint.load(work / "imported.pt").source["ids"]["src"])
    engine = load_engine(work / "imported.pt", device="cpu")
    tokenizer = engine.tokenizer
    lines = read_lines(args.source, args.sentences or None)
    ids = tokenizer.encode_src(lines)  # with </s>, as Marian's tokenizer gives them
    order = sorted(range(len(lines)), key=lambda i: len(ids[i]))
    batches = [order[i : i + args.batch_size] for i in range(0, len(order), args.batch_size)]
    steps = args.length

    hf = transformers.MarianMTModel.from_pretrained(folder).eval()
    hf.generation_config.forced_eos_token_id = None  # no forced end: the length is fixed
    config = hf.config
    unk = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))["<unk>"]

    def run_hf(batch):
        rows = [table[torch.tensor(ids[i])] for i in batch]
        src = torch.nn.utils.rnn.pad_sequence(rows, True, config.pad_token_id)
        mask = torch.nn.utils.rnn.pad_sequence([torch.ones(len(r)) for r in rows], True, 0)
        with torch.inference_mode():
            out = hf.generate(
                input_ids=src,
                attention_mask=mask.long(),
                num_beams=args.beam,
                do_sample=False,
                min_new_tokens=steps,
                max_new_tokens=steps,
                bad_words_ids=[[config.pad_token_id], [unk]],  # as translator's masks
                decoder_start_token_id=config.decoder_start_token_id,
            )
        return [row[1:] for row in out.tolist()]

    dc = engine.cfg.decode.replace(
        beam=args.beam, max_len_a=0.0, max_len_b=steps, batch_size=args.batch_size
    )
    request = engine.request(decode=dc)

    def run_ours(batch):
        found = engine.translate([lines[i] for i in batch], request)
        return [table[torch.tensor(list(hyps[0].tokens), dtype=torch.long)].tolist()
                for hyps in found]  # fmt: skip

    # as translator's CTranslate2 engine runs an export on a CPU (engines/ct2.py): a worker
    # a core, each batch on one thread, the batches handed out as the workers free up
    ct2 = ctranslate2.Translator(
        str(work / "ct2"), device="cpu", compute_type=args.quantization,
        inter_threads=args.threads, intra_threads=1,
    )  # fmt: skip
    src_pieces = tokenizer.src
    tgt_id = {tokenizer.tgt.id_to_piece(i): i for i in range(tokenizer.tgt.get_piece_size())}

    def run_ct2(batches):
        pending = [
            ct2.translate_batch(
                [[src_pieces.id_to_piece(t) for t in ids[i]] for i in batch],
                beam_size=args.beam,
                num_hypotheses=1,
                min_decoding_length=steps,
                max_decoding_length=steps,
                disable_unk=True,
                suppress_sequences=[["<pad>"]],
                max_input_length=0,
                asynchronous=True,
            )
            for batch in batches
        ]
        found = [r.result() for batch in pending for r in batch]
        return [table[[tgt_id[p] for p in r.hypotheses[0]]].tolist() for r in found]

    results, ct2_name = {}, f"translator_ct2_{args.quantization}"
    torch.set_num_threads(args.threads)  # (loading CTranslate2 sets this thread's count)
    for name, run in (("transformers", each(run_hf)), ("translator_pytorch", each(run_ours)),
                      (ct2_name, run_ct2)):  # fmt: skip
        with eos_held_back() if name == "translator_pytorch" else contextlib.nullcontext():
            results[name] = timed(run, batches)
    want = results["transformers"][0]
    # target tokens a sentence: translator's forced </s> is a step of its own
    per = {"transformers": steps, "translator_pytorch": steps + 1, ct2_name: steps}
    speed = {name: round(per[name] * len(lines) / s, 1) for name, (_, s) in results.items()}

    def agreement(got):
        return round(sum(a == b for a, b in zip(got, want)) / len(want), 4)

    def same_tokens(got):  # the share of output positions that hold transformers' token
        same = sum(x == y for a, b in zip(got, want) for x, y in zip(a, b))
        return round(same / sum(map(len, want)), 4)

    lengths = {name: sorted({len(o) for o in out}) for name, (out, _) in results.items()}
    return {
        "bench": "pretrained_speed",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "threads": args.threads,
        "torch_threads": torch.get_num_threads(),
        "model": {
            "layers": args.layers,
            "d_model": args.d_model,
            "heads": args.heads,
            "ffn": args.ffn,
            "vocab": args.vocab,
            "spm_size": args.spm_size,
            "parameters": sum(p.numel() for p in hf.parameters()),
        },  # fmt: skip
        "source": str(args.source),
        "sentences": len(lines),
        "batch_size": args.batch_size,
        "beam": args.beam,
        "output_length": steps,
        "output_lengths": lengths,  # each engine's, </s> not counted: all output_length
        "target_tokens_per_s": speed,
        "seconds": {name: round(s, 2) for name, (_, s) in results.items()},
        "speedup_vs_transformers": {
            name: round(speed[name] / speed["transformers"], 2)
            for name in ("translator_pytorch", ct2_name)
        },
        "targets": {"translator_pytorch": 1.5, "translator_ct2_int8": 5.0},
        "identical_to_transformers": {
            name: agreement(results[name][0]) for name in ("translator_pytorch", ct2_name)
        },
        "same_tokens_as_transformers": {
            name: same_tokens(results[name][0]) for name in ("translator_pytorch", ct2_name)
        },
        "ct2_threads": {"inter": args.threads, "intra": 1},
        "build_seconds": round(built, 1),
        "versions": {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "ctranslate2": ctranslate2.__version__,
        },
    }


if __name__ == "__main__":
    main()
