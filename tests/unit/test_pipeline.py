"""End to end on the demo corpus: train, resume, eval and translate, through the real CLI."""


def test_by_length_buckets_cover_every_sentence():
    from translator.decode.evaluate import by_length

    sources = [" ".join(["w"] * n) for n in [1, 2, 3, 7, 8, 12, 13, 14, 30, 31] * 5]
    refs = [f"sentence number {i} here" for i in range(len(sources))]
    hyps = [r if len(s.split()) <= 10 else "wrong words" for s, r in zip(sources, refs)]
    rows = by_length(sources, hyps, refs, width=5, min_count=5)
    assert sum(r["n"] for r in rows) == len(sources)
    assert rows[0]["bucket"] == "1-5" and rows[0]["bleu"] == 100.0
    assert rows[-1]["bucket"].endswith("+") and rows[-1]["bleu"] < 1.0
    empty = by_length(["", *sources], ["", *hyps], ["", *refs], width=5, min_count=5)
    assert sum(r["n"] for r in empty) == len(sources) + 1  # an empty source counts too
    assert empty[0]["bucket"] == "0-5" and empty[0]["n"] == rows[0]["n"] + 1
