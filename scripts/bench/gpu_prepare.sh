#!/usr/bin/env bash
# bench_data/ for scripts/bench/gpu_session.sh, built on the CPU before a GPU session (the
# card's machine has no package registry and its time is short):
#   bash scripts/bench/gpu_prepare.sh [M30K_CHECKPOINT]
# synthetic/ (the corpus), cache/ (its 32k sentencepiece model and prepared arrays),
# multi30k/ (val and test_2016_flickr), wheels/ (what the card's Python 3.12 lacks: pydantic,
# this machine's sentencepiece, whose version names the cached model; JOEY=1 adds JoeyNMT
# 2.3 and the packages it imports), and m30k.pt, the checkpoint the decoding part times,
# where one is given. Every step is skipped when its output is there already.
set -eu
python=${PYTHON:-python}
here() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }  # (links kept: a venv's)
case $python in */*) python=$(here "$python") ;; esac  # (the steps run in bench_data/)
data=$(here "${MULTI30K:-../shared/data/multi30k}")
m30k=${1:+$(here "$1")}
mkdir -p bench_data
cd bench_data
[ -f synthetic/train.xt.gz ] || "$python" ../scripts/bench/synthetic_corpus.py synthetic --pairs 100000
if ! ls cache/sentencepiece/*.model >/dev/null 2>&1; then
    (cd .. && TRANSLATOR_CACHE=bench_data/cache "$python" -m translator prepare \
        --config configs/gpu_transformer_base.yaml)
fi
mkdir -p multi30k
for f in val.de.gz val.en.gz test_2016_flickr.de.gz test_2016_flickr.en.gz; do
    [ -f "multi30k/$f" ] || cp "$data/$f" multi30k/
done
[ -z "$m30k" ] || [ -f m30k.pt ] || cp "$m30k" m30k.pt

# wheels for CPython 3.12 on manylinux, one version of each
version() { "$python" -c "import importlib.metadata as m; print(m.version('$1'))"; }
wheels=("pydantic==$(version pydantic)" "pydantic_core==$(version pydantic_core)"
        "annotated_types==$(version annotated_types)" "typing_inspection==$(version typing_inspection)"
        "sentencepiece==$(version sentencepiece)")
if [ "${JOEY:-0}" = 1 ]; then
    wheels+=(joeynmt==2.3.0 datasets dill multiprocess subword_nmt sacremoses plotly
             importlib_metadata future)
fi
mkdir -p wheels
"$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d wheels "${wheels[@]}"
du -sh . synthetic cache wheels
