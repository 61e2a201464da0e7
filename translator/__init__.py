"""translator: neural machine translation from raw parallel text to BLEU."""

__version__ = "0.1.0"
