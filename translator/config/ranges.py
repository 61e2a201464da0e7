"""The ranges of the numbers that both the command line and the config take, both ends
included: the decoding settings and the seed. Imports nothing, so the CLI's option
declarations and the config schema share them without loading each other."""

BEAM = (1, 1000)
# ((5 + length) / 6) ** ALPHA stays finite in float32 for outputs of thousands of subwords.
LEN_PENALTY = (-10.0, 10.0)
MAX_LEN_A = (0.0, 1000.0)
MAX_LEN_B = (0, 100_000)
BATCH_SIZE = (1, 100_000)
TEMPERATURE = (0.001, 1000.0)  # sampling's; a smaller one overflows float32 logits
SEED = (0, 2**32 - 1)  # what sentencepiece, numpy and torch all take
