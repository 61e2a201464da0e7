"""Decoding: searches, the PyTorch translator, ensembles, sampling, scores and translation I/O."""
