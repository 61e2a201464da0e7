#!/usr/bin/env bash
# Distillation on Multi30k German->English, end to end: the teacher (the Transformer
# recipe), its translations of the training sources (translator distill), each student
# config on them and, for comparison, the same student on the original pairs at the same
# steps; then everything exported to CTranslate2 int8 and decoded side by side
# (scripts/bench/bench_decode.py: sentences/s and BLEU, with and without the vocabulary shortlist).
#
#   DATA=../shared/data/multi30k OUT=runs/distill bash scripts/recipes/distill.sh
#
# STUDENTS lists the student configs (default configs/multi30k_student.yaml; the results
# page's comparison adds configs/multi30k_student_deep.yaml).
#
# TEACHER_STEPS and STEPS (the students') are step budgets, so the scores do not depend on
# the machine's pace. JOBS trainings run side by side (THREADS threads each); the students
# on the original pairs need no teacher and start with it. A run whose best.pt exists is
# kept and distill continues where it stopped, so an interrupted script continues where it
# stopped. Each stage's wall time goes to $OUT/times.txt. BENCH=0 skips the benchmark (for
# a GPU machine, whose cores are not the ones to time).
set -euo pipefail
DATA=${DATA:-../shared/data/multi30k}
OUT=${OUT:-runs/distill}
TEACHER_STEPS=${TEACHER_STEPS:-2000}
STEPS=${STEPS:-4000}
STUDENTS=${STUDENTS:-configs/multi30k_student.yaml}
JOBS=${JOBS:-1}
THREADS=${THREADS:-$((2 / JOBS > 0 ? 2 / JOBS : 1))}
BATCH=${BATCH:-64}  # sentences per decoding batch (distill, eval)
BENCH=${BENCH:-1}
PY=${PY:-python}
mkdir -p "$OUT"
stage() {  # NAME COMMAND...: run it and note its wall time
  local name=$1 start=$SECONDS; shift
  "$@"
  echo "$name $((SECONDS - start)) s" | tee -a "$OUT/times.txt"
}
train() {  # CONFIG NAME STEPS [--set ...]: one run, unless it is done
  local config=$1 name=$2 steps=$3; shift 3
  [ -f "$OUT/$name/best.pt" ] && return
  # Dropout from the first step and no moving average: the settings the figures in
  # docs/results.md were measured with.
  $PY -m translator train --config "$config" --set data.dir="$DATA" \
      --set train.dropout_after_epochs=0 --set train.ema_decay=null \
      --set train.max_minutes=null --set train.max_steps="$steps" --set train.threads="$THREADS" \
      --set train.valid_every=1000 --set train.save_every=1000 --set run_dir="$OUT/$name" "$@" \
      --overwrite > "$OUT/$name.log" 2>&1
}
slot() {  # wait until fewer than JOBS trainings run
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 1; done
}
name_of() {  # configs/multi30k_student_deep.yaml -> student_deep
  local base; base=$(basename "$1" .yaml); echo "${base#multi30k_}"
}
distilled="[{train: {src: $OUT/data/train.de, tgt: $OUT/data/train.en}}]"
runs=(teacher)

start=$SECONDS
stage teacher train configs/multi30k_transformer.yaml teacher "$TEACHER_STEPS" &
teacher=$!
for config in $STUDENTS; do
  name=$(name_of "$config"); runs+=("$name" "${name}_original")
  slot; stage "${name}_original" train "$config" "${name}_original" "$STEPS" &
done
wait $teacher || { echo "teacher failed: see $OUT/teacher.log" >&2; exit 1; }
slot  # distill takes a place beside the trainings too (JOBS=1: one process at a time)
stage distill $PY -m translator distill --checkpoint "$OUT/teacher/best.pt" --out "$OUT/data" \
    --set data.dir="$DATA" --batch-size "$BATCH"
for config in $STUDENTS; do
  name=$(name_of "$config")
  slot; stage "$name" train "$config" "$name" "$STEPS" --set "data.corpora=$distilled" &
done
wait
echo "teacher, distill and students $((SECONDS - start)) s" | tee -a "$OUT/times.txt"
for name in "${runs[@]}"; do  # a failed run stops the script here, naming its log
  [ -f "$OUT/$name/best.pt" ] || { echo "$name failed: see $OUT/$name.log" >&2; exit 1; }
done
for name in "${runs[@]}"; do  # test BLEU with each config's own search
  [ -f "$OUT/$name.eval.json" ] && continue
  slot; $PY -m translator eval --checkpoint "$OUT/$name/best.pt" --set data.dir="$DATA" \
      --batch-size "$BATCH" --json > "$OUT/$name.eval.json.tmp" 2>> "$OUT/$name.log" &&
      mv "$OUT/$name.eval.json.tmp" "$OUT/$name.eval.json" &
done
wait
[ "$BENCH" = 1 ] || exit 0
checkpoints=()
for name in "${runs[@]}"; do
  [[ $name == *_original ]] || checkpoints+=(--checkpoint "$OUT/$name/best.pt")
done
stage bench $PY scripts/bench/bench_decode.py --set data.dir="$DATA" --engine ct2-int8 \
    --engine ct2-int8-vmap --beam 1 --beam 5 "${checkpoints[@]}" | tee "$OUT/bench_decode.jsonl"
