"""Training batches in the saved data order, built ahead in a background thread.

The stream starts at (epoch, batch) of the training state, so a resumed run sees
exactly the batches it would have seen. Each epoch is planned once (numpy, from
the lengths), this process's share is taken under torchrun, and each batch is
sliced out of the token arrays while the model trains on the one before.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass

from translator.data.batching import Batch, TokenBatches
from translator.errors import UserError


@dataclass
class Item:
    batch: Batch
    epoch: int
    index: int  # of this batch within this process's share of the epoch
    batches_in_epoch: int
    padding: float | None = None  # the epoch's padding share, on its first batch


class BatchStream:
    def __init__(
        self,
        batches: TokenBatches,
        epoch: int,
        index: int,
        rank: int = 0,
        world: int = 1,
        depth: int = 4,
        pin: bool = False,
    ):
        self.batches, self.rank, self.world, self.pin = batches, rank, world, pin
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._produce, args=(epoch, index), name="batch-prefetch", daemon=True
        )
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self, epoch: int, index: int) -> None:
        try:
            while not self._stop.is_set():
                plan = self.batches.plan(epoch).shard(self.rank, self.world)
                if not len(plan):
                    raise UserError(
                        f"an epoch of the training data gives fewer batches than the "
                        f"{self.world} processes",
                        "lower train.batch_tokens or start fewer processes",
                    )
                padding = self.batches.plan_padding_share(plan) if index == 0 else None
                self.batches.ids.release()
                for k, batch in self.batches.batches(plan, epoch, index):
                    # The kernel maps pages around each one read; without this, the
                    # resident set would gather much of a big corpus's files.
                    self.batches.ids.release()
                    if self.pin:
                        batch = batch.pin()
                    item = Item(batch, epoch, k, len(plan), padding if k == 0 else None)
                    if not self._put(item):
                        return
                epoch, index = epoch + 1, 0
        except BaseException as err:  # handed to the training thread, which raises it
            self._put(err)

    def next(self) -> Item:
        item = self._queue.get()
        if isinstance(item, BaseException):
            self.close()
            raise item
        return item

    def close(self) -> None:
        """Stop the producer and wait for it, so no thread outlives the training run."""
        self._stop.set()
        while self._thread.is_alive():
            try:
                self._queue.get_nowait()
            except queue.Empty:
                self._thread.join(timeout=0.05)
