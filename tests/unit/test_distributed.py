"""Data-parallel training: 2 CPU processes under torchrun with the gloo backend."""

from translator.train.distributed import Group, shard


def test_shard_gives_every_rank_different_batches_and_the_same_count():
    batches = list(range(11))
    parts = [shard(batches, Group(rank=r, world=3)) for r in range(3)]
    assert [len(p) for p in parts] == [3, 3, 3]
    assert sorted(sum(parts, [])) == list(range(9))
    assert shard(batches, Group()) == batches
