"""Pictures: attention heatmaps, BLEU by length, training curves."""
