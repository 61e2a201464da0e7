"""What the training loop reads: the prepared training split as batches in the saved
order (built ahead in a thread), and the dev set for validation."""

from __future__ import annotations

import logging

from translator.config import Config
from translator.data.align import aligned_ids, guided
from translator.data.batching import Batch, TokenBatches
from translator.data.corpora import dev_sets, mixed_batches, prepare_corpora
from translator.data.prepare import prepare, wait_for_prepared
from translator.data.prepared import training_digest
from translator.data.readers import iter_split_files
from translator.data.stream import BatchStream
from translator.data.subwords import SampledIds
from translator.data.tokenizer import Tokenizer
from translator.errors import UserError
from translator.train.distributed import Group
from translator.train.validation import DevSet

log = logging.getLogger(__name__)


def _check_own_splits(cfg: Config) -> None:
    """Read the dev and test files the config names (data.dev, data.test) once: they are
    small, and a mistake in them (a missing file, unequal line counts, bytes that are not
    UTF-8, no pairs at all) is named before the training split is prepared, which takes
    minutes on a large corpus. One in the dev split stops the run; one in the test split,
    which training never reads, is a warning (`translator eval` reads it)."""
    data = cfg.data
    for key in ("dev", "test"):
        if not getattr(data, key):
            continue
        try:
            pairs = iter_split_files(getattr(data, key), f"data.{key}", data.src_lang,
                                     data.tgt_lang)  # fmt: skip
            if not sum(1 for _ in pairs):
                raise UserError(
                    f"the {key} split is empty: it needs at least one pair (data.{key})"
                )
        except UserError as err:
            if key == "dev":
                raise
            log.warning(f"{err.message}; training goes on without the test split, which "
                        "`translator eval` reads (or give eval --src and --ref)")  # fmt: skip


class TrainingData:
    def __init__(self, cfg: Config, group: Group, tokenizer: Tokenizer | None, pin: bool):
        """`tokenizer`: the one a resumed run was trained with (None: the prepared data's).
        The first process on each machine prepares (or finds current) the data; the others
        wait for it and map the same files."""
        self.cfg, self.group, self.pin = cfg, group, pin
        limit = cfg.model.max_positions
        alpha = cfg.tokenizer.sampling_alpha
        guide = guided(cfg)  # (a setting it cannot take is refused before any work)
        _check_own_splits(cfg)

        def drawn(ids, tokenizer):  # every training batch cut with a segmentation drawn anew
            return ids if alpha is None else SampledIds(ids, tokenizer, alpha, cfg.seed, limit)

        prepared = None
        if cfg.data.training_corpora():
            prepared = prepare_corpora(cfg, tokenizer, wait=group.local_rank != 0)
            data = prepared[0]
            self.batches = mixed_batches(cfg, prepared, limit, drawn)
        else:
            if group.local_rank == 0:
                data = prepare(cfg, tokenizer)
            else:
                data = wait_for_prepared(cfg, tokenizer)
            ids = aligned_ids(data) if guide else drawn(data.ids, data.tokenizer)
            rows = ids.within(limit)
            if rows is not None:
                log.info(f"dropped {len(ids) - len(rows)} pairs over model.max_positions={limit}")
            self.batches = TokenBatches(ids, None, cfg.train.batch_tokens, cfg.seed, rows=rows)
        self.tokenizer = data.tokenizer
        self.digest = training_digest(prepared or [data])  # (TrainState.data_digest)
        self.devs = [
            DevSet(name, pairs, prefix, self.encode(pairs, prefix))
            for name, pairs, prefix in dev_sets(cfg, data, prepared)
        ]
        for dev in self.devs:  # validation scores them: an empty one is caught before training
            if not dev.pairs:
                where = f" of {dev.name}" if dev.name else ""
                raise UserError(f"the dev split{where} is empty: validation needs at least "
                                "one pair (data.dev)")  # fmt: skip
        self.stream: BatchStream | None = None  # started at the first step, from the state

    def encode(self, pairs, prefix=()) -> TokenBatches:
        """A small set of pairs (dev) tokenized in memory, within model.max_positions;
        `prefix`: ids put before each source (a direction's language tag)."""
        src = [[*prefix, *s] for s in self.tokenizer.encode_src([s for s, _ in pairs])]
        tgt = self.tokenizer.encode_tgt([t for _, t in pairs])
        limit = self.cfg.model.max_positions
        keep = [i for i in range(len(src)) if len(src[i]) <= limit and len(tgt[i]) <= limit]
        return TokenBatches(
            [src[i] for i in keep],
            [tgt[i] for i in keep],
            self.cfg.train.batch_tokens,
            self.cfg.seed,
        )

    def next(self, state, count: int) -> list[Batch]:
        """The next `count` batches after (state.epoch, state.batch_in_epoch), which it
        advances: the position a checkpoint saves, so that --resume continues exactly."""
        if self.stream is None:
            g = self.group
            self.stream = BatchStream(
                self.batches, state.epoch, state.batch_in_epoch, g.rank, g.world, pin=self.pin
            )
        out = []
        while len(out) < count:
            item = self.stream.next()
            if item.padding is not None:
                log.info(
                    f"epoch {item.epoch + 1}: {item.batches_in_epoch} batches, "
                    f"padding {100 * item.padding:.1f}%"
                )
            out.append(item.batch)
            if item.index + 1 < item.batches_in_epoch:
                state.epoch, state.batch_in_epoch = item.epoch, item.index + 1
            else:
                state.epoch, state.batch_in_epoch = item.epoch + 1, 0
        return out

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None
