#!/usr/bin/env bash
# Multilingual models on Multi30k (English, German, French and Czech captions, parallel line
# by line) against bilingual ones, all with the Transformer recipe's sizes:
#   - a bilingual model for each of en->de, en->fr, en->cs, de->en, fr->en, cs->en (STEPS);
#   - one en->{de,fr,cs} and one {de,fr,cs}->en model, each with 3 x STEPS (equal compute);
#   - one de<->en + fr<->en model (3 x STEPS) that translates de->fr zero-shot, against a
#     pivot through English with the same model, and the share of its outputs in the wrong
#     language (scripts/tools/wrong_language.py: stopwords and language-specific letters).
# Test BLEU (test_2016, each config's beam 5) of every direction goes to $OUT/results.jsonl.
#
#   DATA=../shared/data/multi30k OUT=runs/multilingual bash scripts/recipes/multilingual.sh
#
# STEPS is a step budget, so the scores do not depend on the machine's pace. JOBS trainings
# run side by side (THREADS threads each). A run whose best.pt exists is kept, so an
# interrupted script continues where it stopped. Each stage's wall time goes to
# $OUT/times.txt.
set -euo pipefail
DATA=${DATA:-../shared/data/multi30k}
OUT=${OUT:-runs/multilingual}
STEPS=${STEPS:-1500}
MULTI_STEPS=${MULTI_STEPS:-$((3 * STEPS))}
CONFIG=${CONFIG:-configs/multi30k_transformer.yaml}
JOBS=${JOBS:-1}
THREADS=${THREADS:-$((2 / JOBS > 0 ? 2 / JOBS : 1))}
BATCH=${BATCH:-64}  # sentences per decoding batch (eval)
VALID=${VALID:-1000}  # steps between validations
PY=${PY:-python}
mkdir -p "$OUT"
train() {  # NAME STEPS [--set ...]: one run, unless it is done
  local name=$1 steps=$2 start=$SECONDS; shift 2
  [ -f "$OUT/$name/best.pt" ] && return
  # Dropout from the first step and no moving average: the settings the figures in
  # docs/results.md were measured with.
  $PY -m translator train --config "$CONFIG" --set data.dir="$DATA" \
      --set train.dropout_after_epochs=0 --set train.ema_decay=null \
      --set train.max_minutes=null --set train.max_steps="$steps" --set train.threads="$THREADS" \
      --set train.valid_every="$VALID" --set train.save_every="$VALID" \
      --set run_dir="$OUT/$name" "$@" --overwrite > "$OUT/$name.log" 2>&1
  echo "$name $((SECONDS - start)) s" >> "$OUT/times.txt"
}
slot() {  # wait until fewer than JOBS processes run
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 1; done
}
score() {  # NAME RUN [eval options]: test BLEU into $OUT/NAME.eval.json, unless it is there
  local name=$1 run=$2; shift 2
  [ -f "$OUT/$name.eval.json" ] && return
  $PY -m translator eval --checkpoint "$OUT/$run/best.pt" --set data.dir="$DATA" \
      --batch-size "$BATCH" --json "$@" > "$OUT/$name.eval.json.tmp" 2>> "$OUT/$run.log"
  mv "$OUT/$name.eval.json.tmp" "$OUT/$name.eval.json"
}

start=$SECONDS
slot; train multi_en-x "$MULTI_STEPS" --set "data.directions=[en-de, en-fr, en-cs]" &
slot; train multi_x-en "$MULTI_STEPS" --set "data.directions=[de-en, fr-en, cs-en]" &
slot; train zeroshot "$MULTI_STEPS" --set "data.directions=[de-en, en-de, fr-en, en-fr]" &
for pair in en-de en-fr en-cs de-en fr-en cs-en; do
  slot; train "bi_$pair" "$STEPS" --set data.src_lang="${pair%-*}" \
      --set data.tgt_lang="${pair#*-}" &
done
wait
echo "trainings $((SECONDS - start)) s" >> "$OUT/times.txt"
for name in multi_en-x multi_x-en zeroshot bi_en-de bi_en-fr bi_en-cs bi_de-en bi_fr-en bi_cs-en; do
  [ -f "$OUT/$name/best.pt" ] || { echo "$name failed: see $OUT/$name.log" >&2; exit 1; }
done

for lang in de fr cs; do
  slot; score "bi_en-$lang" "bi_en-$lang" &
  slot; score "bi_$lang-en" "bi_$lang-en" &
  slot; score "multi_en-$lang" multi_en-x --tgt-lang "$lang" &
  slot; score "multi_$lang-en" multi_x-en --src-lang "$lang" &
done
slot; score zeroshot_de-fr zeroshot --src-lang de --tgt-lang fr --output "$OUT/zeroshot.de-fr.txt" &
slot; score zeroshot_de-en zeroshot --src-lang de --tgt-lang en --output "$OUT/zeroshot.de-en.txt" &
wait
# The pivot: the model's own English translations of the German test sources, into French.
for test_fr in "$DATA"/test_2016_flickr.fr.gz "$DATA"/test_2016_flickr.fr "$DATA"/test.fr; do
  [ -f "$test_fr" ] && break
done
score zeroshot_pivot zeroshot --src "$OUT/zeroshot.de-en.txt" --ref "$test_fr" --tgt-lang fr \
    --output "$OUT/zeroshot.pivot.txt"
for how in de-fr pivot; do
  $PY scripts/tools/wrong_language.py --lang fr "$OUT/zeroshot.$how.txt" > "$OUT/zeroshot.$how.lang.json"
done
echo "all $((SECONDS - start)) s" >> "$OUT/times.txt"
$PY - "$OUT" "$STEPS" "$MULTI_STEPS" <<'EOF'
import json, sys
from pathlib import Path
out, steps, multi = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rows = []
for path in sorted(out.glob("*.eval.json")):
    name = path.name[: -len(".eval.json")]
    result = json.loads(path.read_text())
    row = {"run": name, "steps": steps if name.startswith("bi_") else multi,
           "direction": result["direction"], "bleu": result["bleu"],
           "chrf": result.get("chrf"), "data": result["data"]}
    lang = out / f"{name.replace('_', '.', 1)}.lang.json"
    if lang.is_file():
        row["wrong_language_share"] = json.loads(lang.read_text())["wrong_share"]
    rows.append(row)
text = "".join(json.dumps(r) + "\n" for r in rows)
(out / "results.jsonl").write_text(text)
print(text, end="")
EOF
