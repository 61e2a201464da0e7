#!/usr/bin/env bash
# The measurements of one run on a GPU machine, in the order that matters if time runs out:
# the card's peak with Transformer-big and -base in eager mode, JoeyNMT at both sizes, the
# gpu tests, both sizes compiled, both compiled with train.attention: products, decoding.
# Run from the repository root on a CUDA machine whose python3 has torch:
#   bash scripts/bench/gpu_session.sh OUTDIR [WHEELS]
# It expects bench_data/ as scripts/bench/gpu_prepare.sh makes it:
# synthetic/ (scripts/bench/synthetic_corpus.py), cache/sentencepiece/ (its 32k model,
# trained by `translator prepare --config configs/gpu_transformer_base.yaml` with
# TRANSLATOR_CACHE=bench_data/cache), multi30k/ (val and test_2016_flickr) and m30k.pt
# (a Multi30k Transformer). WHEELS: a folder of wheels the machine lacks (pydantic, JoeyNMT,
# and this machine's sentencepiece version, which the cached model's name depends on).
# Each part has its own time limit, so one that fails or hangs does not stop the rest, and
# its standard error (the kernel profile of the parts that take --profile) lands in OUTDIR.
# PARTS picks parts and their order (default: all, in the order below), e.g. compiled and
# eager side by side in one call:
#   PARTS="big_compiled big_eager base_compiled base_eager" bash ...
set -u
out=${1:?OUTDIR}
mkdir -p "$out"
if [ -n "${2:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "$2"/*.whl && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export TRANSLATOR_CACHE="$PWD/bench_data/cache"
spm=$(ls bench_data/cache/sentencepiece/*.model | head -1)  # the one the data was prepared with
train="$out/gpu_train.jsonl"
log() { echo "== $(date -u +%H:%M:%S) $*"; }

log machine
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())'

big=(--set model.d_model=1024 --set model.heads=16 --set model.ff_dim=4096)
bench() {  # limit, then bench_train.py arguments
    local limit=$1
    shift
    timeout "$limit" python3 scripts/bench/bench_train.py \
        --config configs/gpu_transformer_base.yaml --set data.workers=1 --dtype bf16 \
        --output "$train" "$@"
}
joey() {  # name, limit, then joeynmt_train.py arguments
    timeout "$2" python3 scripts/bench/joeynmt_train.py --corpus bench_data/synthetic \
        --langs xs xt --spm "$spm" --batch-tokens 26500 \
        --fp16 --log-every 10 --skip 1 --logs 3 --output "$train" "${@:3}" 2>"$out/joey_$1.log"
    tail -3 "$out/joey_$1.log"
}
# Eager runs and the peer first; compiling takes minutes of its own. The first run prepares
# the data in this process (data.workers=1): 16 spawned workers each importing torch took
# longer than the encoding itself.
big_eager() { bench 120 "${big[@]}" --steps 20 --warmup 3 --compile false --profile 2; }
base_eager() { bench 90 --steps 20 --warmup 3 --compile false; }
joey_big() { joey big 120 --d-model 1024 --heads 16 --ff 4096; }
joey_base() { joey base 100 --d-model 512 --heads 8 --ff 2048; }
gpu_tests() { timeout 150 python3 -m pytest -q -m gpu tests/gpu -p no:cacheprovider 2>&1 | tail -40; }
big_compiled() { bench 240 "${big[@]}" --steps 30 --warmup 8 --settle 10 --compile true; }
base_compiled() { bench 200 --steps 40 --warmup 8 --settle 10 --compile true --profile 2; }
# train.attention: products against the fused kernels' compiled rows above
products=(--compile true --set train.attention=products)
big_products() { bench 240 "${big[@]}" --steps 30 --warmup 8 --settle 10 "${products[@]}" --profile 2; }
base_products() { bench 200 --steps 40 --warmup 8 --settle 10 "${products[@]}" --profile 2; }
decoding() {
    for rows in 64 256; do
        timeout 90 python3 scripts/bench/bench_decode.py --checkpoint bench_data/m30k.pt \
            --set data.dir=bench_data/multi30k --set data.train_split=val --engine pytorch \
            --beam 5 --batch-size "$rows" | tee -a "$out/gpu_decode.jsonl"
    done
}
for part in ${PARTS:-big_eager base_eager joey_big joey_base gpu_tests big_compiled base_compiled big_products base_products decoding}; do
    log "$part"
    "$part" 2> >(tee "$out/$part.err" >&2)  # each part's log and profile come back as a file
done
log done
