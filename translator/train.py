"""The training loop: AdamW, inverse-square-root warmup, label smoothing, clipping,
accumulation, autocast, validation by dev BLEU, early stopping, a wall-clock
budget, exact resume, a graceful stop on Ctrl-C or SIGTERM, and data-parallel
training under torchrun (rank 0 validates, writes and logs; stop decisions are
shared so that no rank is left waiting).
"""

from __future__ import annotations

import gc
import json
import logging
import math
import signal
import time
from dataclasses import asdict
from pathlib import Path

import torch
from torch.nn.parallel import DistributedDataParallel

from translator.checkpoint import Checkpoint
from translator.config import Config, save_config
from translator.data.feed import TrainingData
from translator.distributed import all_sum, all_sum_, any_rank, close, init_from_env
from translator.errors import UserError
from translator.fileio import atomic_write_bytes
from translator.models.family import build_model
from translator.objective import inverse_sqrt_lr
from translator.progress import TrainingBar
from translator.resume import check_resumable, gather_rng, restore_rng
from translator.runtime import (
    memory_mb,
    pick_device,
    pick_dtype,
    process_seconds,
    release_free_memory,
    say,
    seed_everything,
    set_threads,
    to_device,
)
from translator.train_state import Stop, StopKind, TrainState
from translator.update import Updater
from translator.validation import validate

log = logging.getLogger(__name__)


MAX_BAD_STEPS = 20  # consecutive non-finite losses before giving up


class Trainer:
    def __init__(self, cfg: Config, resume: bool = False):
        self.cfg, tc = cfg, cfg.train
        self.run_dir = Path(cfg.run_dir)
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UserError(f"run_dir '{self.run_dir}' cannot be created: {err.strerror}") from None
        set_threads(tc.threads)
        seed_everything(cfg.seed)
        self.group, rank_device = init_from_env(tc.device)
        self.device = rank_device or pick_device(tc.device)
        self.dtype = pick_dtype(tc.dtype, self.device)
        if not self.group.main:
            logging.getLogger("translator").setLevel(logging.WARNING)
        saved = self._resume_checkpoint() if resume else None
        given = saved.build_tokenizer(str(self.run_dir / "last.pt")) if saved else None
        self.data = TrainingData(cfg, self.group, given, pin=self.device.type == "cuda")
        self.tokenizer = self.data.tokenizer
        self._build_model()
        self.updater = Updater(self.model, self.net, cfg.train, self.group, self.device, self.dtype)
        self.optimizer = self.updater.optimizer
        self.unsynced_tokens = 0  # this rank's target tokens since the last sync()
        self.state = TrainState()
        self.stop: Stop | None = None
        if saved:
            self._restore(saved)
        log.info(
            f"model {cfg.model.type}: {self.model.num_parameters():,} parameters on "
            f"{self.device} ({str(self.dtype).split('.')[-1]}), {self.group.world} process(es)"
        )

    # -- setup -------------------------------------------------------------------------------
    def _build_model(self) -> None:
        cfg, tok = self.cfg, self.tokenizer
        self.model = build_model(cfg.model, tok.src_vocab_size, tok.tgt_vocab_size, tok.joint).to(
            self.device
        )
        # The model as training calls it: wrapped for gradient all-reduce under torchrun.
        self.net = self.model
        if self.group.active:
            ids = [self.device.index] if self.device.type == "cuda" else None
            self.net = DistributedDataParallel(self.model, device_ids=ids)
            torch.manual_seed(cfg.seed + 7919 * self.group.rank)  # own dropout masks per rank
        if cfg.train.compile:  # shapes change from batch to batch: one graph with symbolic sizes
            self.net = torch.compile(self.net, dynamic=True)

    def _resume_checkpoint(self) -> Checkpoint:
        path = self.run_dir / "last.pt"
        if not path.is_file():
            raise UserError(f"--resume: no {path} to resume from", "train without --resume first")
        saved = Checkpoint.load(path)
        check_resumable(saved, self.cfg, self.group.world, str(path))
        return saved

    def _restore(self, saved: Checkpoint) -> None:
        saved.load_weights(self.model, str(self.run_dir / "last.pt"))
        self.optimizer.load_state_dict(saved.optimizer)
        if saved.scaler:
            self.updater.scaler.load_state_dict(saved.scaler)
        self.state = TrainState(**saved.progress)
        restore_rng(saved, self.group)
        st = self.state
        log.info(f"resumed from step {st.step} (epoch {st.epoch}, batch {st.batch_in_epoch})")

    # -- checkpoints -------------------------------------------------------------------------
    def save(self, name: str) -> None:
        """best.pt (rank 0 alone calls it) holds what translating needs; last.pt, written at
        the same step by every rank, also what resuming needs, every rank's random state too."""
        resumable = name == "last.pt"
        rng = gather_rng(self.group) if resumable else []
        if not self.group.main:
            return
        Checkpoint(
            config=self.cfg.to_dict(),
            tokenizer=self.tokenizer.state(),
            model=self.model.state_dict(),
            progress=asdict(self.state),
            rng=rng,
            optimizer=self.optimizer.state_dict() if resumable else None,
            scaler=self.updater.scaler.state_dict() if resumable else None,
        ).save(self.run_dir / name)

    # -- validation --------------------------------------------------------------------------
    def validate(self) -> dict:
        result = validate(
            self.model,
            self.tokenizer,
            self.cfg,
            self.data.dev,
            self.data.dev_batches,
            self.device,
            self.dtype,
        )
        return {"step": self.state.step, **result}

    def validate_and_keep_best(self) -> None:
        s, tc = self.state, self.cfg.train
        if not self.group.main:  # rank 0 validates; its stop decision reaches the others
            return
        result = self.validate()
        improved = result["dev_bleu"] > s.best_bleu
        if improved:
            s.best_bleu, s.best_step, s.bad_validations = result["dev_bleu"], s.step, 0
        else:
            s.bad_validations += 1
        s.history.append(result)
        say(
            f"validation step {s.step}: dev loss {result['dev_loss']:.3f}, "
            f"dev BLEU {result['dev_bleu']:.2f} ({result['seconds']:.1f}s)"
            + (" new best" if improved else f", best {s.best_bleu:.2f} at {s.best_step}")
        )
        if improved:
            self.save("best.pt")
        if tc.patience and s.bad_validations >= tc.patience:
            self.stop = Stop(
                StopKind.EARLY_STOPPING,
                f"early stopping: no better dev BLEU in {tc.patience} validations",
            )

    # -- the loop ----------------------------------------------------------------------------
    def _next_batches(self):
        """The next `accumulate` batches, in the saved data order."""
        return self.data.next(self.state, self.cfg.train.accumulate)

    def train_step(self) -> int:
        """One optimizer step, skipped on the device if its loss is not finite; returns this
        rank's target tokens. Nothing here waits for the device: sync() reads the results."""
        micro = self._next_batches()
        s, tc, g = self.state, self.cfg.train, self.group
        local_tokens = sum(b.n_tokens for b in micro)
        # DDP averages gradients over ranks; dividing by the mean count per rank makes the
        # loss a sum over all ranks' tokens, normalised by all of them.
        normaliser = self._all_tokens(local_tokens) / g.world
        loss = all_sum_(self.updater.gradients(micro, normaliser, s.step + 1), g) / g.world
        self.updater.step(loss, inverse_sqrt_lr(s.step + 1, tc.lr, tc.warmup_steps))
        s.step += 1
        self.unsynced_tokens += local_tokens
        return local_tokens

    def _all_tokens(self, local_tokens: int):
        """Target tokens of this step on all ranks: a device tensor under torchrun."""
        if not self.group.active:
            return float(local_tokens)
        return all_sum_(to_device(torch.tensor(float(local_tokens)), self.device), self.group)

    def sync(self) -> dict:
        """Read the device-side results since the last sync: mean loss, skipped steps and
        target tokens (all ranks), and stop a diverged run. Called at the same steps on
        every rank, since under torchrun it is a collective."""
        s = self.state
        stats = self.updater.read()
        tokens = int(all_sum(self.unsynced_tokens, self.group, self.device))
        self.unsynced_tokens = 0
        s.target_tokens += tokens
        if stats["skipped"]:
            s.skipped_steps += stats["skipped"]
            say(
                f"step {s.step}: {stats['skipped']} step(s) skipped for a non-finite loss "
                f"({s.skipped_steps} so far)"
            )
        if stats["longest_bad_run"] >= MAX_BAD_STEPS:
            raise UserError(
                f"training diverged: {MAX_BAD_STEPS} non-finite losses in a row by step {s.step}",
                "lower train.lr or raise train.warmup_steps;"
                " last.pt and best.pt keep the last good weights",
            )
        return {**stats, "tokens": tokens}

    def _on_signal(self, signum, frame) -> None:
        if self.stop is not None and self.stop.kind is StopKind.INTERRUPTED:
            raise KeyboardInterrupt  # a second signal: stop right now
        self.stop = Stop(StopKind.INTERRUPTED, f"interrupted by {signal.Signals(signum).name}")

    def _should_stop(self) -> bool:
        """Every rank stops at the same step when any rank has a reason to. Under torchrun
        the ranks agree at log steps (a collective waits for the device)."""
        s, tc = self.state, self.cfg.train
        if self.stop is None and s.elapsed >= self.budget:
            message = f"time budget of {tc.max_minutes:g} minutes reached"
            self.stop = Stop(StopKind.TIME_BUDGET, message)
        if self.stop is None and s.step >= tc.max_steps:
            self.stop = Stop(StopKind.MAX_STEPS, f"train.max_steps={tc.max_steps} reached")
        if not self.group.active:
            return self.stop is not None
        if s.step % tc.log_every and s.step < tc.max_steps:
            return False
        if any_rank(self.stop is not None, self.group, self.device):
            self.stop = self.stop or Stop(StopKind.OTHER_RANK, "stopped by another rank")
            return True
        return False

    def _log(self, bar: TrainingBar, seconds: float) -> None:
        s, tc = self.state, self.cfg.train
        stats = self.sync()
        loss = stats["loss"]
        s.losses.append([s.step, round(loss, 4) if math.isfinite(loss) else None])
        release_free_memory()
        mem = memory_mb()
        s.memory.append([s.step, mem.get("rss"), mem.get("anon")])
        minutes = {"min": f"{s.elapsed / 60:.1f}/{tc.max_minutes or 0:g}"}
        bar.set_postfix(
            loss=f"{loss:.3f}",
            tok_s=f"{stats['tokens'] / max(seconds, 1e-9):,.0f}",
            lr=f"{self.optimizer.param_groups[0]['lr']:.2e}",
            **(minutes if tc.max_minutes else {}),
        )

    @property
    def budget(self) -> float:
        """The wall-clock budget in seconds (inf without train.max_minutes)."""
        minutes = self.cfg.train.max_minutes
        return minutes * 60 if minutes else math.inf

    def run(self) -> TrainState:
        if self.group.main:
            save_config(self.cfg, self.run_dir / "config.yaml")
        handlers = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        self.model.train()
        s = self.state
        self.bar = TrainingBar(self.cfg.train, s.step, s.elapsed, disable=not self.group.main)
        self.last_validated = -1
        self.startup_seconds = process_seconds()  # from the command's start to the first step
        try:
            self._loop()
            self._finish()
        finally:
            self.bar.close()
            self.data.close()
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
        self._write_summary()
        return s

    def _loop(self) -> None:
        """Steps until a stop; training time runs from `clock`, the logged rate's window
        from `window_start`."""
        s, tc = self.state, self.cfg.train
        clock = window_start = time.perf_counter()
        while not self._should_stop():
            self.train_step()
            synced = s.step % tc.log_every == 0
            if synced:
                self._log(self.bar, time.perf_counter() - window_start)
            now = time.perf_counter()
            s.elapsed += now - clock
            s.train_seconds += now - clock
            self.bar.advance(s.step, s.elapsed)
            synced = self._validate_and_save(now) or synced
            clock = time.perf_counter()
            if synced:  # the tokens so far are counted: the next rate starts here
                window_start = clock
        self.sync()
        s.train_seconds += time.perf_counter() - clock  # the device finishing its queue

    def _validate_and_save(self, now: float) -> bool:
        """Validation and last.pt when their step has come; whether either synced."""
        s, tc = self.state, self.cfg.train
        synced = False
        if s.step % tc.valid_every == 0 and s.elapsed < self.budget:
            self.sync()
            self.validate_and_keep_best()
            s.elapsed += time.perf_counter() - now
            self.last_validated, synced = s.step, True
        if s.step % tc.save_every == 0:
            self.sync()
            self.save("last.pt")
            synced = True
        return synced

    def _finish(self) -> None:
        """After the last step: validate it (unless interrupted), then write last.pt."""
        s = self.state
        interrupted = self.stop.kind is StopKind.INTERRUPTED
        if self.last_validated != s.step and not interrupted and s.step > 0:
            self.validate_and_keep_best()
        self.save("last.pt")
        if self.stop.kind is StopKind.TIME_BUDGET:
            self.bar.stopped(s.step)

    def _write_summary(self) -> None:
        s = self.state
        summary = {
            "stop_reason": self.stop.message,
            "steps": s.step,
            "epochs": s.epoch,
            "best_dev_bleu": round(s.best_bleu, 2),
            "best_step": s.best_step,
            "target_tokens_per_second": round(s.target_tokens / max(s.train_seconds, 1e-9)),
            "train_minutes": round(s.train_seconds / 60, 2),
            "wall_minutes": round(s.elapsed / 60, 2),
            "skipped_steps": s.skipped_steps,
            "parameters": self.model.num_parameters(),
            "device": str(self.device),
            "dtype": str(self.dtype).split(".")[-1],
            "processes": self.group.world,
            "validations": s.history,
            "losses": s.losses,
            "startup_seconds": round(self.startup_seconds, 2),
            "peak_rss_mb": memory_mb().get("peak"),
            "memory": s.memory,
        }
        if self.group.main:
            text = json.dumps(summary, indent=1) + "\n"
            atomic_write_bytes(self.run_dir / "summary.json", text.encode())
        self.summary = summary

    def close(self, finished: bool) -> None:
        """Tear down in order: the DDP wrapper (it holds the process
        group), then the group itself, after every rank has finished (`finished`: this rank
        ended normally, so the others are on their way to the same barrier). A group left for
        the interpreter's exit to destroy can abort the process after training succeeded."""
        self.data.close()
        self.net = self.updater.net = self.model
        gc.collect()
        close(self.group, barrier=finished)


def train(cfg: Config, resume: bool = False) -> dict:
    trainer = Trainer(cfg, resume=resume)
    finished = False
    try:
        trainer.run()
        finished = True
    finally:
        trainer.close(finished)
    return trainer.summary
