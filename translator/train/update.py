"""One optimizer update that never waits for the device.

AdamW (fused where torch has a fused kernel for the device), a dynamic loss scale
for fp16, gradient clipping, and a guard that skips any update whose loss is not
finite. Everything a step produces (the loss, the count of skipped updates) stays
in device tensors; `read()` brings it to the host, which the trainer does only at
its log interval. On a GPU that keeps the host queueing kernels ahead of the device
instead of stopping at every step to read a number.
"""

from __future__ import annotations

import contextlib
import logging
import math

import torch
from torch import nn

from translator.errors import UserError
from translator.runtime import autocast, check_dtype
from translator.train.compiling import compiled_loss, length_multiple
from translator.train.loss import token_loss, training_loss
from translator.train.report import StepStats

log = logging.getLogger(__name__)


def fused_adamw_supported(device: torch.device) -> bool:
    """Whether this torch has a fused AdamW kernel for the device (which devices have one
    changes from release to release), asked of torch itself with one tiny update."""
    try:
        weight = torch.zeros(1, device=device, requires_grad=True)
        weight.grad = torch.zeros_like(weight)
        torch.optim.AdamW([weight], fused=True).step()
    except (RuntimeError, ValueError, NotImplementedError):
        return False
    return True


def parameter_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """Weight decay for weight matrices only: biases, LayerNorm weights and embeddings
    (also an output layer tied to an embedding) are not decayed, as is usual. Without decay
    the split changes nothing, and one group keeps the optimizer-state layout that earlier
    checkpoints were saved with, so they still resume."""
    params = [p for p in model.parameters() if p.requires_grad]
    if weight_decay == 0:
        return [{"params": params, "weight_decay": 0.0}]
    exempt = set()
    for module in model.modules():
        for p in module.parameters(recurse=False):
            if isinstance(module, (nn.Embedding, nn.LayerNorm)) or p.ndim < 2:
                exempt.add(id(p))
    return [
        {"params": [p for p in params if id(p) not in exempt], "weight_decay": weight_decay},
        {"params": [p for p in params if id(p) in exempt], "weight_decay": 0.0},
    ]


class Updater:
    def __init__(self, model, net, tc, group, device: torch.device, dtype: torch.dtype):
        """`model` owns the weights; `net` is what training calls (wrapped by DDP or compiled)."""
        check_dtype(model, dtype, device)
        self.net, self.tc, self.group, self.device, self.dtype = net, tc, group, device, dtype
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(
            parameter_groups(model, tc.weight_decay),
            lr=tc.lr,
            betas=tuple(tc.betas),
            fused=fused_adamw_supported(device),
        )
        # fp16 gradients under- and overflow without a dynamic scale. For bf16 and fp32 the
        # scale is held at 1 (exact) and the scaler serves only to skip a non-finite update
        # on the device: it checks the gradients while unscaling and the optimizer step
        # reads that flag itself (the fused kernels take it as a tensor, with no sync).
        self.fp16 = dtype == torch.float16
        self.multiple = length_multiple(tc.compile, device)
        self.token_loss = compiled_loss(token_loss) if tc.compile else token_loss
        self.scaler = torch.amp.GradScaler(device.type, init_scale=2.0**16 if self.fp16 else 1.0)
        zero = torch.zeros((), device=device)
        self.loss_sum = zero.clone()  # summed per-token loss of the good steps of a log line
        self.good = zero.clone()  # good steps of the log line in progress
        self.skipped = zero.clone()  # skipped steps since read()
        self.run = zero.clone()  # non-finite losses in a row, now
        self.longest_run = zero.clone()  # the longest such run since read()
        self.norm_sum = zero.clone()  # summed finite gradient norms, likewise
        self.norms = zero.clone()  # finite gradient norms, likewise
        self.guided = tc.guided_alignment  # the alignment loss's weight (train/loss.py)
        self.align_step = zero.clone()  # this step's alignment loss per target token
        self.align_sum = zero.clone()  # summed alignment losses of the good steps, likewise

    def gradients(self, micro: list, normaliser, step: int) -> torch.Tensor:
        """Backward over the micro-batches; on out-of-memory, again with each batch split in
        halves (then quarters), since a failed backward may have left partial gradients.
        Under torchrun only the last backward of a step all-reduces (no_sync before it)."""
        for pieces in (1, 2, 4):
            self.optimizer.zero_grad(set_to_none=True)
            self.align_step.zero_()
            parts = [part for batch in micro for part in batch.split(pieces)]
            try:
                total = torch.zeros((), device=self.device)
                for i, part in enumerate(parts):
                    sync = i == len(parts) - 1 or not self.group.active
                    with self.net.no_sync() if not sync else contextlib.nullcontext():
                        part = part.to(self.device).padded(self.multiple)
                        with autocast(self.device, self.dtype):
                            loss, aligned = training_loss(
                                self.net, part, self.tc.label_smoothing, self.guided,
                                self.token_loss,
                            )  # fmt: skip
                        if aligned is not None:  # (reported apart from the token loss)
                            self.align_step += aligned.detach() / normaliser
                            loss_and_guide = loss + self.guided * aligned
                        else:
                            loss_and_guide = loss
                        self.scaler.scale(loss_and_guide / normaliser).backward()
                    total += loss.detach() / normaliser
                return total
            except RuntimeError as err:  # torch.OutOfMemoryError is a RuntimeError
                if not is_oom(err):
                    raise
                if self.group.active:  # one rank cannot retry out of step with the others
                    break
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                rows = max(b.src.size(0) for b in micro) // pieces
                log.warning(
                    "step %d: out of memory with batches of up to %d rows; splitting them",
                    step,
                    rows,
                )
        self.optimizer.zero_grad(set_to_none=True)
        raise UserError(
            f"out of memory (train.batch_tokens={self.tc.batch_tokens}"
            + (")" if self.group.active else ", even with each batch split in 4)"),
            "lower train.batch_tokens and raise train.accumulate to keep the effective batch",
        )

    def step(self, loss: torch.Tensor, lr: float) -> None:
        """Clip and apply the accumulated gradients, unless `loss` (the step's per-token loss,
        a 0-d device tensor) is not finite; then the weights and the optimizer state stay."""
        bad = ~torch.isfinite(loss)
        grads = [p.grad for p in self.params if p.grad is not None]
        if grads:
            # A non-finite loss can come with finite gradients (an infinite loss whose inputs
            # were clamped): one NaN in the gradients makes the scaler skip the update too.
            grads[0].view(-1)[:1].add_(torch.where(bad, torch.nan, 0.0))
        self.scaler.unscale_(self.optimizer)
        # Without clipping the norm is still measured (for the logs): an infinite limit
        # scales the gradients by exactly 1.
        limit = self.tc.clip_norm if self.tc.clip_norm > 0 else math.inf
        norm = torch.nn.utils.clip_grad_norm_(self.params, limit, foreach=True)
        finite = torch.isfinite(norm) & ~bad
        self.norm_sum += torch.where(finite, norm.float(), 0.0)
        self.norms += finite
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.scaler.step(self.optimizer)
        self.scaler.update(None if self.fp16 else 1.0)
        self.loss_sum += torch.where(bad, 0.0, loss.float())
        self.align_sum += torch.where(bad, 0.0, self.align_step.float())
        self.good += ~bad
        self.skipped += bad
        self.run.add_(1).mul_(bad)
        torch.maximum(self.longest_run, self.run, out=self.longest_run)

    @property
    def window(self) -> list[torch.Tensor]:
        """The sums a log line averages, over the steps since the last log line."""
        return [self.loss_sum, self.good, self.norm_sum, self.norms, self.align_sum]

    def restore_window(self, sums: list[float]) -> None:
        """The sums StepStats.window gave when last.pt was written ([]: none)."""
        if sums:
            for t, value in zip(self.window, sums, strict=True):
                t.fill_(value)

    def read(self, logged: bool = True) -> StepStats:
        """What the steps since the last read did, this rank's tokens aside (a host sync:
        call it at log intervals); the loss and norms those since the last `logged` read,
        which alone starts their window again."""
        stats = [*self.window, self.skipped, self.longest_run]
        loss_sum, good, norm_sum, norms, align, skipped, longest = torch.stack(stats).tolist()
        for t in [*self.window, self.skipped] if logged else [self.skipped]:
            t.zero_()
        self.longest_run.copy_(self.run)
        return StepStats(
            loss=loss_sum / good if good else float("nan"),
            grad_norm=norm_sum / norms if norms else float("nan"),
            skipped=int(skipped),
            longest_bad_run=int(longest),
            alignment=(align / good if good else float("nan")) if self.guided else None,
            window=(0.0,) * 5 if logged else (loss_sum, good, norm_sum, norms, align),
        )


def is_oom(err: BaseException) -> bool:
    """A CUDA or CPU allocator failure, as opposed to any other RuntimeError."""
    if isinstance(err, torch.OutOfMemoryError):
        return True
    text = str(err)
    return "out of memory" in text or "can't allocate memory" in text
