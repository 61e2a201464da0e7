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
import random
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from translator.checkpoint import load_checkpoint, save_checkpoint
from translator.config import Config, save_config
from translator.data.feed import TrainingData
from translator.data.tokenizer import Tokenizer
from translator.distributed import all_sum, all_sum_, any_rank, close, init_from_env
from translator.errors import UserError
from translator.fileio import atomic_write_bytes
from translator.models.family import build_model
from translator.objective import inverse_sqrt_lr
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
from translator.update import Updater
from translator.validation import validate

log = logging.getLogger(__name__)


MAX_BAD_STEPS = 20  # consecutive non-finite losses before giving up


@dataclass
class TrainState:
    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0  # next batch of `epoch` to train on
    best_bleu: float = -1.0
    best_step: int = 0
    bad_validations: int = 0
    elapsed: float = 0.0  # seconds of wall clock spent training so far, across resumes
    train_seconds: float = 0.0  # the same, without validation time
    target_tokens: int = 0
    skipped_steps: int = 0
    history: list = field(default_factory=list)  # validations
    losses: list = field(default_factory=list)  # [step, training loss] at each log_every
    memory: list = field(default_factory=list)  # [step, resident MiB, anonymous MiB] likewise


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
        resume_ckpt = self._resume_checkpoint() if resume else None

        given = Tokenizer.from_state(resume_ckpt["tokenizer"]) if resume_ckpt else None
        self.data = TrainingData(cfg, self.group, given, pin=self.device.type == "cuda")
        self.tokenizer = self.data.tokenizer

        self.model = build_model(
            cfg.model,
            self.tokenizer.src_vocab_size,
            self.tokenizer.tgt_vocab_size,
            self.tokenizer.joint,
        ).to(self.device)
        # The model as training calls it: wrapped for gradient all-reduce under torchrun.
        self.net = self.model
        if self.group.active:
            ids = [self.device.index] if self.device.type == "cuda" else None
            self.net = DistributedDataParallel(self.model, device_ids=ids)
            torch.manual_seed(cfg.seed + 7919 * self.group.rank)  # own dropout masks per rank
        if tc.compile:  # shapes change from batch to batch: one graph with symbolic sizes
            self.net = torch.compile(self.net, dynamic=True)
        self.updater = Updater(self.model, self.net, cfg.train, self.group, self.device, self.dtype)
        self.optimizer = self.updater.optimizer
        self.unsynced_tokens = 0  # this rank's target tokens since the last sync()
        self.state = TrainState()
        if resume_ckpt:
            self._restore(resume_ckpt)
        self.stop_reason: str | None = None
        log.info(
            f"model {cfg.model.type}: {self.model.num_parameters():,} parameters on "
            f"{self.device} ({str(self.dtype).split('.')[-1]}), {self.group.world} process(es)"
        )

    # -- setup -------------------------------------------------------------------------------
    def _resume_checkpoint(self) -> dict:
        path = self.run_dir / "last.pt"
        if not path.is_file():
            raise UserError(f"--resume: no {path} to resume from", "train without --resume first")
        return load_checkpoint(path)

    def _restore(self, ckpt: dict) -> None:
        ts = ckpt["train_state"]
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ts["optimizer"])
        if ts.get("scaler"):
            self.updater.scaler.load_state_dict(ts["scaler"])
        self.state = TrainState(**ts["progress"])
        torch.set_rng_state(ts["rng"]["torch"])
        random.setstate(ts["rng"]["python"])
        if torch.cuda.is_available() and ts["rng"].get("cuda"):
            torch.cuda.set_rng_state_all(ts["rng"]["cuda"])
        st = self.state
        log.info(f"resumed from step {st.step} (epoch {st.epoch}, batch {st.batch_in_epoch})")

    # -- checkpoints -------------------------------------------------------------------------
    def _payload(self, with_optimizer: bool) -> dict:
        rng = {"torch": torch.get_rng_state(), "python": random.getstate()}
        if torch.cuda.is_available():
            rng["cuda"] = torch.cuda.get_rng_state_all()
        train_state = {"progress": asdict(self.state), "rng": rng}
        if with_optimizer:
            train_state["optimizer"] = self.optimizer.state_dict()
            train_state["scaler"] = self.updater.scaler.state_dict()
        return {
            "config": self.cfg.to_dict(),
            "tokenizer": self.tokenizer.state(),
            "model": self.model.state_dict(),
            "train_state": train_state,
        }

    def save(self, name: str) -> None:
        if not self.group.main:
            return
        save_checkpoint(self.run_dir / name, self._payload(with_optimizer=name == "last.pt"))

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
            self.stop_reason = f"early stopping: no better dev BLEU in {tc.patience} validations"

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
        if self.stop_reason and self.stop_reason.startswith("interrupted"):
            raise KeyboardInterrupt  # a second signal: stop right now
        self.stop_reason = f"interrupted by {signal.Signals(signum).name}"

    def _should_stop(self, budget: float) -> bool:
        """Every rank stops at the same step when any rank has a reason to. Under torchrun
        the ranks agree at log steps (a collective waits for the device)."""
        s, tc = self.state, self.cfg.train
        if self.stop_reason is None and s.elapsed >= budget:
            self.stop_reason = f"time budget of {tc.max_minutes:g} minutes reached"
        if self.stop_reason is None and s.step >= tc.max_steps:
            self.stop_reason = f"train.max_steps={tc.max_steps} reached"
        if not self.group.active:
            return self.stop_reason is not None
        if s.step % tc.log_every and s.step < tc.max_steps:
            return False
        if any_rank(self.stop_reason is not None, self.group, self.device):
            self.stop_reason = self.stop_reason or "stopped by another rank"
            return True
        return False

    def _log(self, bar, seconds: float) -> None:
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

    def run(self) -> TrainState:
        cfg, tc, s = self.cfg, self.cfg.train, self.state
        if self.group.main:
            save_config(cfg, self.run_dir / "config.yaml")
        handlers = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        self.model.train()
        budget = tc.max_minutes * 60 if tc.max_minutes else math.inf
        bar = tqdm(
            total=tc.max_steps,
            initial=s.step,
            desc="train",
            unit="step",
            dynamic_ncols=True,
            disable=not self.group.main,
        )
        last_validated = -1
        self.startup_seconds = process_seconds()  # from the command's start to the first step
        clock = window_start = time.perf_counter()  # training time runs from `clock`
        try:
            while not self._should_stop(budget):
                self.train_step()
                bar.update(1)
                synced = s.step % tc.log_every == 0
                if synced:
                    self._log(bar, time.perf_counter() - window_start)
                now = time.perf_counter()
                s.elapsed += now - clock
                s.train_seconds += now - clock
                if s.step % tc.valid_every == 0 and s.elapsed < budget:
                    self.sync()
                    self.validate_and_keep_best()
                    s.elapsed += time.perf_counter() - now
                    last_validated, synced = s.step, True
                if s.step % tc.save_every == 0:
                    self.sync()
                    self.save("last.pt")
                    synced = True
                clock = time.perf_counter()
                if synced:  # the tokens so far are counted: the next rate starts here
                    window_start = clock
            self.sync()
            s.train_seconds += time.perf_counter() - clock  # the device finishing its queue
            interrupted = self.stop_reason.startswith("interrupted")
            if last_validated != s.step and not interrupted and s.step > 0:
                self.validate_and_keep_best()
            self.save("last.pt")
        finally:
            bar.close()
            self.data.close()
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
        self._write_summary()
        return s

    def _write_summary(self) -> None:
        s = self.state
        summary = {
            "stop_reason": self.stop_reason,
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
