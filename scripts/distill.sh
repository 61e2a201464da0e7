#!/usr/bin/env bash
# Distillation on Multi30k German->English, end to end: the teacher (the Transformer
# recipe), its translations of the training sources (translator distill), the student
# (configs/multi30k_student.yaml) on them and, for comparison, the same student on the
# original pairs, all at one step budget; then both exported to CTranslate2 int8 and
# decoded side by side (scripts/bench_decode.py: sentences/s and BLEU, with and without the
# vocabulary shortlist).
#
#   DATA=../shared/data/multi30k OUT=runs/distill STEPS=2400 bash scripts/distill.sh
#
# A run whose best.pt exists is kept, and distill continues where it stopped, so an
# interrupted script continues where it stopped. Each stage's wall time goes to
# $OUT/times.txt.
set -euo pipefail
DATA=${DATA:-../shared/data/multi30k}
OUT=${OUT:-runs/distill}
STEPS=${STEPS:-2400}
JOBS=${JOBS:-1}  # the two students side by side
THREADS=${THREADS:-$((2 / JOBS > 0 ? 2 / JOBS : 1))}
PY=${PY:-python}
mkdir -p "$OUT"
stage() {  # NAME COMMAND...: run it and note its wall time
  local name=$1 start=$SECONDS; shift
  "$@"
  echo "$name $((SECONDS - start)) s" | tee -a "$OUT/times.txt"
}
train() {  # CONFIG NAME [--set ...]: one run, unless it is done
  local config=$1 name=$2; shift 2
  [ -f "$OUT/$name/best.pt" ] && return
  $PY -m translator train --config "$config" --set data.dir="$DATA" \
      --set train.max_minutes=null --set train.max_steps="$STEPS" --set train.threads="$THREADS" \
      --set train.valid_every=400 --set train.save_every=400 --set run_dir="$OUT/$name" "$@" \
      --overwrite > "$OUT/$name.log" 2>&1
}
distilled="[{train: {src: $OUT/data/train.de, tgt: $OUT/data/train.en}}]"

stage teacher train configs/multi30k_transformer.yaml teacher --set train.threads=2
stage distill $PY -m translator distill --checkpoint "$OUT/teacher/best.pt" --out "$OUT/data" \
    --set data.dir="$DATA"
both() {  # a failed run stops the script
  train configs/multi30k_student.yaml student --set "data.corpora=$distilled" &
  local first=$!
  [ "$JOBS" -gt 1 ] || wait $first
  train configs/multi30k_student.yaml student_original &
  wait $!
  wait $first
}
stage students both
for name in teacher student student_original; do
  [ -f "$OUT/$name.eval.json" ] || $PY -m translator eval --checkpoint "$OUT/$name/best.pt" \
      --set data.dir="$DATA" --json > "$OUT/$name.eval.json"
done
stage bench $PY scripts/bench_decode.py --set data.dir="$DATA" --engine ct2-int8 \
    --engine ct2-int8-vmap --beam 1 --beam 5 --checkpoint "$OUT/teacher/best.pt" \
    --checkpoint "$OUT/student/best.pt" --checkpoint "$OUT/student_original/best.pt" \
    | tee "$OUT/bench_decode.jsonl"
