"""Engines and export: opening a model to translate with, CTranslate2, quantization."""
