#!/usr/bin/env bash
# Tagged back-translation on Multi30k German->English, simulated low resource
# (docs/results.md): the first 10,000 training pairs are the genuine data, the English
# sides of the other ~19,000 the monolingual text. It trains the reverse model, samples
# synthetic German for the monolingual English, then the baseline, back-translation and
# tagged back-translation, two seeds each, all at the same step budget; and scores them.
#
#   DATA=../shared/data/multi30k OUT=runs/bt STEPS=2000 JOBS=2 bash scripts/recipes/backtranslation.sh
#
# On a GPU, JOBS=6 THREADS=2 BATCH=512 runs the six forward trainings side by side.
#
# A run whose best.pt exists is kept, so an interrupted script continues where it stopped.
set -euo pipefail
DATA=${DATA:-../shared/data/multi30k}
OUT=${OUT:-runs/bt}
STEPS=${STEPS:-2000}
JOBS=${JOBS:-2}
THREADS=${THREADS:-1}  # torch threads per training
BATCH=${BATCH:-64}  # sentences per decoding batch
PY=${PY:-python}
GENUINE=${GENUINE:-10000}
# Dropout from the first step and no moving average: the settings the figures in
# docs/results.md were measured with.
T=($PY -m translator train --config configs/multi30k_transformer.yaml
   --set train.dropout_after_epochs=0 --set train.ema_decay=null
   --set data.dir="$DATA" --set train.max_minutes=null --set train.max_steps="$STEPS"
   --set train.threads="$THREADS" --set train.valid_every=400 --set train.save_every=400)
mkdir -p "$OUT/data"
D=$OUT/data

$PY - "$DATA" "$D" "$GENUINE" <<'PY'
import gzip, sys
from pathlib import Path
data, out, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
sides = {lang: gzip.open(data / f"train.{lang}.gz", "rt", encoding="utf-8").read().splitlines()
         for lang in ("de", "en")}
for lang, lines in sides.items():
    (out / f"genuine.{lang}").write_text("\n".join(lines[:n]) + "\n", encoding="utf-8")
(out / "mono.en").write_text("\n".join(sides["en"][n:]) + "\n", encoding="utf-8")
PY

train() {  # NAME SEED CORPORA...: one run, unless it is done
  local name=$1 seed=$2; shift 2
  [ -f "$OUT/$name/best.pt" ] && return
  "${T[@]}" --set run_dir="$OUT/$name" --set seed="$seed" "$@" --overwrite > "$OUT/$name.log" 2>&1
}
genuine="{train: {src: $D/genuine.de, tgt: $D/genuine.en}}"

# 1. the reverse (English->German) model on the genuine pairs
train en_de 1 --set data.src_lang=en --set data.tgt_lang=de \
    --set "data.corpora=[{train: {src: $D/genuine.en, tgt: $D/genuine.de}}]"
# 2. synthetic German for the monolingual English, sampled (Edunov et al. 2018)
[ -f "$D/mono.de" ] || $PY -m translator translate --batch-size "$BATCH" --checkpoint "$OUT/en_de/best.pt" \
    --input "$D/mono.en" --output "$D/mono.de" --sampling topp:0.9 --seed 1
# 3. baseline, back-translation, tagged back-translation; two seeds each
runs=()
for seed in 1 2; do
  runs+=("base_s$seed $seed [$genuine]")
  runs+=("bt_s$seed $seed [$genuine, {train: {src: $D/mono.de, tgt: $D/mono.en}}]")
  runs+=("tagged_s$seed $seed [$genuine, {train: {src: $D/mono.de, tgt: $D/mono.en}, tag: \"<bt>\"}]")
done
for run in "${runs[@]}"; do
  read -r name seed corpora <<< "$run"
  train "$name" "$seed" --set "data.corpora=$corpora" &
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 5; done
done
wait
# 4. test BLEU of each (beam 5, the config's decoding)
for run in "${runs[@]}"; do
  read -r name _ <<< "$run"
  [ -f "$OUT/$name.eval.json" ] || $PY -m translator eval --checkpoint "$OUT/$name/best.pt" \
      --batch-size "$BATCH" --json > "$OUT/$name.eval.json"
  $PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], d.get('bleu', d))" \
      "$OUT/$name.eval.json" "$name"
done
