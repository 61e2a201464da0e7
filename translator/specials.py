"""Special-token ids, the same in every tokenizer, so that models, search and the loss can
rely on them without importing the tokenizer (sentencepiece) or anything else in data/."""

PAD, UNK, BOS, EOS = 0, 1, 2, 3
# Their pieces in every sentencepiece model (its defaults for these ids).
SPECIAL_PIECES = ("<pad>", "<unk>", "<s>", "</s>")
