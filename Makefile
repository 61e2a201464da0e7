# The CPU path: torch is pinned to the CPU build (see README for GPU installs).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH ?= torch==2.13.0
# PyTorch's CPU wheels; on Linux, PyPI's torch is the CUDA build (with GBs of CUDA libraries).
# pip takes 2.13.0+cpu from here over PyPI's 2.13.0; its dependencies come from PyPI with
# the package's (--no-deps: one lookup on this index, not one per dependency).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
DATA ?= ../shared/data/multi30k

.PHONY: install demo test test-unit test-avx2 test-slow test-gpu fuzz lint format bench-train bench-decode bench-serve bench-data sweep clean

$(BIN)/translator: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q --no-deps "$(TORCH)" --extra-index-url "$(TORCH_INDEX)"
	$(BIN)/pip install -q -e ".[dev,plot,tensorboard,ctranslate2,serve,pretrained,align,documents]"
	touch $@

install: $(BIN)/translator

demo: install
	$(BIN)/translator train --config configs/demo.yaml --overwrite
	$(BIN)/translator eval --checkpoint runs/demo/best.pt
	$(BIN)/translator translate --checkpoint runs/demo/best.pt "Ein Hund läuft." "Am dritten März liest die alte Frau ein Buch."

# Two test files at a time (pytest-xdist, a file's tests on one worker, so its fixtures are
# built once); TEST_JOBS=0 runs them one after another.
TEST_JOBS ?= 2
test: install
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile

# The unit tests alone: no training, no subprocess.
test-unit: install
	$(BIN)/python -m pytest -q tests/unit

# The bf16 tests again as a CPU without native bf16 runs them: oneDNN limited to AVX2.
test-avx2: install
	ONEDNN_MAX_CPU_ISA=AVX2 $(BIN)/python -m pytest -q tests/unit/test_dtype.py \
		tests/integration/test_dtype.py \
		tests/unit/test_rnn.py::test_weights_round_trip_and_bf16_autocast \
		tests/unit/test_transformer.py::test_cpu_mixed_precision_takes_the_plain_attention_kernel_and_stays_close_to_float32

test-slow: install
	$(BIN)/python -m pytest -q -m slow

# The checks that need a CUDA GPU (tests/gpu): mixed precision, fused kernels, cuDNN, no host
# sync in a step, compile; skipped where torch sees no GPU (the CPU build of `make install`).
test-gpu: install
	$(BIN)/python -m pytest -q -m gpu tests/gpu

# The property-based tests (tests/*/test_fuzz_*.py) with many more examples than `make test`
# gives them (the hypothesis profile "fuzz", tests/conftest.py).
fuzz: install
	$(BIN)/python -m pytest -q --hypothesis-profile=fuzz tests/unit/test_fuzz_*.py tests/integration/test_fuzz_*.py

lint: install
	$(BIN)/ruff check translator tests scripts
	$(BIN)/ruff format --check translator tests scripts

format: install
	$(BIN)/ruff format translator tests scripts

bench-train: install
	$(BIN)/python scripts/bench/bench_train.py --config configs/multi30k_transformer.yaml \
		--set data.dir=$(DATA) --steps 30 --dtype fp32 --dtype bf16 \
		--batch-tokens 2048 --batch-tokens 4096 --compile false --compile true
	for f in lstm bahdanau luong; do \
		$(BIN)/python scripts/bench/bench_train.py --config configs/multi30k_$$f.yaml \
			--set data.dir=$(DATA) --steps 30 --dtype fp32 --dtype bf16 || exit 1; \
	done
	$(BIN)/python scripts/bench/bench_train.py --config configs/multi30k_bahdanau.yaml \
		--set data.dir=$(DATA) --set model.hidden_size=256 --steps 30 --dtype fp32 --dtype bf16

bench-decode: install
	$(BIN)/python scripts/bench/bench_decode.py --set data.dir=$(DATA) \
		$(foreach f,transformer lstm bahdanau luong,$(if $(wildcard runs/multi30k_$(f)/best.pt),--checkpoint runs/multi30k_$(f)/best.pt))

# The server under 1, 8 and 64 concurrent clients beside `translate --input`, on the
# Multi30k test source; an idle machine gives meaningful figures.
bench-serve: install
	$(BIN)/python scripts/bench/bench_serve.py --checkpoint runs/multi30k_transformer/best.pt \
		--source $(DATA)/test_2016_flickr.de.gz

# Corpora of 100k, 1M and 10M pairs under /tmp (about 2 GB, never committed), then
# preparation, training start-up, speed and memory at each size, and a 2,000-step
# Multi30k run for memory over time: about 45 minutes on 2 cores.
bench-data: install
	$(BIN)/python scripts/bench/bench_data.py --data $(DATA) | tee results/bench_data.jsonl

# The learning-rate schedule search of docs/recipes.md at a smaller scale: 600 steps a
# run (about 10 minutes each on 2 cores), ranked on dev BLEU; add --grid KEY=V1,V2 to
# search more.
sweep: install
	$(BIN)/python scripts/bench/sweep.py --config configs/multi30k_transformer.yaml \
		--set data.dir=$(DATA) --steps 600 --grid train.lr_schedule=inverse_sqrt,linear,cosine

clean:
	rm -rf runs .pytest_cache .ruff_cache
