"""What a fresh process loads: reading a config loads no torch, and the models, the searches
and the loss load nothing of the data package (tests/unit/test_layout.py reads the imports
themselves)."""

import subprocess
import sys

import pytest

CASES = {
    "config": (
        "import translator.config\ntranslator.config.load_config\n",
        ("torch", "numpy", "sentencepiece"),
    ),
    "models, search, loss": (
        "import translator.decode.search, translator.train.loss\n"
        "from translator.models.family import build_model, model_config\n"
        "for family in ('transformer', 'lstm', 'bahdanau', 'luong'):\n"
        "    build_model(model_config(type=family), 40, 40, True)\n",
        ("translator.data", "sentencepiece"),
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_fresh_process_loads_only_what_it_needs(case):
    code, unwanted = CASES[case]
    probe = (
        f"import sys\n{code}print(sorted(m for m in sys.modules if m.startswith({unwanted!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
