"""The vocabulary shortlist (engines/shortlist.py): the most frequent target subwords, and
for each source subword those that co-occur with it most strongly, in CTranslate2's format."""

from translator.engines.shortlist import count_pairs, shortlist, write_vmap

# source 1 comes with target 5, source 2 with target 6; target 9 is in every sentence
PAIRS = [([1, 3], [5, 9]), ([1], [5, 9, 9]), ([2, 3], [6, 9]), ([2], [6, 9]), ([3], [9, 7])]


def test_each_source_subword_brings_its_translation_first():
    n, src_df, tgt_df, keys, counts = count_pairs(PAIRS, 4, 10)
    assert n == 5 and src_df.tolist() == [0, 2, 2, 3] and tgt_df[9] == 5  # once a sentence
    always, table = shortlist(src_df, tgt_df, keys, counts, 10, frequent=1, per_source=2)
    assert always == [9]
    assert table[1] == [5, 9] and table[2] == [6, 9]  # Dice puts the translation before 9
    assert table[3][0] == 9 and len(table[3]) == 2 and 0 not in table


def test_counts_merge_across_chunks(monkeypatch):
    from translator.engines import shortlist as module

    whole = count_pairs(PAIRS, 4, 10)
    monkeypatch.setattr(module, "CHUNK", 2)
    chunked = count_pairs(PAIRS, 4, 10)
    assert all((a == b).all() for a, b in zip(whole[1:], chunked[1:])) and whole[0] == chunked[0]


def test_the_file_is_ctranslate2s_vocabulary_map(tmp_path):
    path = tmp_path / "vmap.txt"
    write_vmap(path, [9], {1: [5, 9], 2: [6]}, lambda i: f"s{i}", lambda i: f"t{i}")
    assert path.read_text(encoding="utf-8").splitlines() == ["\tt9", "s1\tt5 t9", "s2\tt6"]
