"""The training loop: AdamW, inverse-square-root warmup, label smoothing, clipping,
accumulation, autocast, validation by dev BLEU, early stopping, a wall-clock
budget, exact resume, fine-tuning from a checkpoint, a moving average of the weights,
step checkpoints for averaging, TensorBoard scalars, RUN/train.log and
RUN/validations.jsonl, a graceful stop on Ctrl-C or SIGTERM, and data-parallel training
under torchrun (rank 0 validates, writes and logs; stop decisions are shared so that no
rank is left waiting).
"""

from __future__ import annotations

import contextlib
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

from translator.config import Config, save_config
from translator.errors import UserError
from translator.fileio import atomic_write_bytes
from translator.models.checkpoint import Checkpoint
from translator.models.family import build_model
from translator.progress import TrainingBar
from translator.runtime import (
    memory_mb,
    pick_device,
    pick_dtype,
    process_seconds,
    release_free_memory,
    seed_everything,
    set_threads,
    to_device,
)
from translator.train.averaging import prune_step_checkpoints, step_path
from translator.train.distributed import all_sum, all_sum_, any_rank, close, init_from_env
from translator.train.ema import WeightEMA
from translator.train.feed import TrainingData
from translator.train.finetune import initial_checkpoint
from translator.train.resume import check_resumable, gather_rng, restore_rng
from translator.train.schedule import planned_steps, scheduled_lr
from translator.train.state import RunLog, Stop, StopKind, TrainState, claim_run_dir, summary
from translator.train.tensorboard_log import TensorBoardLog, check_installed
from translator.train.update import Updater
from translator.train.validation import report, validate

log = logging.getLogger(__name__)


MAX_BAD_STEPS = 20  # consecutive non-finite losses before giving up


class Trainer:
    def __init__(
        self,
        cfg: Config,
        resume: bool = False,
        init_from: str | Path | None = None,
        overwrite: bool = False,
    ):
        """`init_from`: a checkpoint whose weights and tokenizer a new run starts from;
        `overwrite`: a new run may replace an earlier one's checkpoints in run_dir."""
        self.cfg, tc = cfg, cfg.train
        if resume and init_from is not None:
            raise UserError("--init-from starts a new run, --resume continues one: give one")
        if resume and overwrite:
            raise UserError("--overwrite starts a new run, --resume continues one: give one")
        if tc.tensorboard:
            check_installed()
        self.run_dir = Path(cfg.run_dir)
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UserError(f"run_dir '{self.run_dir}' cannot be created: {err.strerror}") from None
        set_threads(tc.threads)
        seed_everything(cfg.seed)
        self.group, rank_device = init_from_env(tc.device)
        self.device = rank_device or pick_device(tc.device)
        if not self.group.main:
            logging.getLogger("translator").setLevel(logging.WARNING)
        if not resume:
            claim_run_dir(self.run_dir, overwrite, init_from, remove=self.group.main)
        self.run_log = RunLog(self.run_dir, enabled=self.group.main)
        with self.run_log.attached():
            self._setup(resume, init_from)

    def _setup(self, resume: bool, init_from: str | Path | None) -> None:
        cfg, tc = self.cfg, self.cfg.train
        self.dtype = pick_dtype(tc.dtype, self.device)
        saved = self._resume_checkpoint() if resume else None
        given = saved.build_tokenizer(str(self.run_dir / "last.pt")) if saved else None
        start, given = initial_checkpoint(init_from, cfg) if init_from else (None, given)
        self.data = TrainingData(cfg, self.group, given, pin=self.device.type == "cuda")
        self.tokenizer = self.data.tokenizer
        self._build_model()
        if start:
            start.load_weights(self.model, str(init_from))
            log.info(f"starting from the weights of {init_from}")
        self.updater = Updater(self.model, self.net, cfg.train, self.group, self.device, self.dtype)
        self.optimizer = self.updater.optimizer
        self.ema = WeightEMA(self.model, tc.ema_decay) if tc.ema_decay else None
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
        if self.ema:  # ema_decay cannot change on resume: a saved run with it saved its EMA
            self.ema.load_state_dict(saved.ema, str(self.run_dir / "last.pt"))
        self.state = TrainState(**saved.progress)
        self.run_log.restart(self.state.history)
        restore_rng(saved, self.group)
        st = self.state
        log.info(f"resumed from step {st.step} (epoch {st.epoch}, batch {st.batch_in_epoch})")

    # -- checkpoints -------------------------------------------------------------------------
    def save(self, name: str) -> None:
        """best.pt (rank 0 alone calls it) holds what translating needs (the averaged weights
        under train.ema_decay); last.pt, written at the same step by every rank, also what
        resuming needs, every rank's random state and the moving average too; a step
        checkpoint (`step-N.pt`) the weights as trained, for `translator average`."""
        resumable = name == "last.pt"
        rng = gather_rng(self.group) if resumable else []
        if not self.group.main:
            return
        best_ema = self.ema is not None and name == "best.pt"
        Checkpoint(
            config=self.cfg.to_dict(),
            tokenizer=self.tokenizer.state(),
            model=self.ema.weights() if best_ema else self.model.state_dict(),
            progress=asdict(self.state),
            rng=rng,
            optimizer=self.optimizer.state_dict() if resumable else None,
            scaler=self.updater.scaler.state_dict() if resumable else None,
            ema=self.ema.state_dict() if resumable and self.ema else None,
        ).save(self.run_dir / name)

    def save_step(self) -> None:
        """The step checkpoint, then (once it is whole) the oldest ones beyond keep_checkpoints."""
        keep, step = self.cfg.train.keep_checkpoints, self.state.step
        if keep and self.group.main:
            self.save(step_path(self.run_dir, step).name)
            prune_step_checkpoints(self.run_dir, keep, step)

    # -- validation --------------------------------------------------------------------------
    def validate(self) -> dict:
        """The dev set scored with the moving average of the weights when there is one."""
        data, device, dtype = self.data, self.device, self.dtype
        with self.ema.applied() if self.ema else contextlib.nullcontext():
            result = validate(
                self.model, self.tokenizer, self.cfg, data.dev, data.dev_batches, device, dtype
            )
        return {"step": self.state.step, **result}

    def validate_and_keep_best(self) -> None:
        s, tc = self.state, self.cfg.train
        if not self.group.main:  # rank 0 validates; its stop decision reaches the others
            return
        result = self.validate()
        hypotheses = result.pop("hypotheses", [])
        by_loss = tc.best_by == "loss"
        if by_loss:
            improved = result["dev_loss"] < s.best_loss
        else:
            improved = result["dev_bleu"] > s.best_bleu
        if improved:
            s.best_bleu, s.best_loss = result["dev_bleu"], result["dev_loss"]
            s.best_step, s.bad_validations = s.step, 0
        else:
            s.bad_validations += 1
        # wall-clock minutes since the start, this validation included (for `translator curves`)
        s.history.append({**result, "minutes": round((s.elapsed + result["seconds"]) / 60, 3)})
        self.run_log.validation(s.history[-1])
        self.board.scalars(s.step, {"dev/loss": result["dev_loss"], "dev/bleu": result["dev_bleu"]})
        best = f"loss {s.best_loss:.3f}" if by_loss else f"{s.best_bleu:.2f}"
        note = " new best" if improved else f", best {best} at {s.best_step}"
        for line in report(result, note, self.data.dev, hypotheses):
            log.info(line)
        if improved:
            self.save("best.pt")
        if tc.patience and s.bad_validations >= tc.patience:
            self.stop = Stop(
                StopKind.EARLY_STOPPING,
                f"early stopping: no better dev {'loss' if by_loss else 'BLEU'} "
                f"in {tc.patience} validations",
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
        lr = scheduled_lr(tc, s.step + 1, s.planned_steps, self.optimizer.param_groups[0]["lr"])
        self.updater.step(loss, lr)
        if self.ema:
            self.ema.update()
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
            log.warning(
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
        s = self.state
        stats = self.sync()
        self._plan()
        loss = stats["loss"]
        s.losses.append([s.step, round(loss, 4) if math.isfinite(loss) else None])
        release_free_memory()
        mem = memory_mb()
        s.memory.append([s.step, mem.get("rss"), mem.get("anon")])
        rate, lr = stats["tokens"] / max(seconds, 1e-9), self.optimizer.param_groups[0]["lr"]
        bar.report(s.step, s.elapsed, loss, lr, rate)
        scalars = {"loss": loss, "lr": lr, "grad_norm": stats["grad_norm"], "tokens_per_s": rate}
        self.board.scalars(s.step, {f"train/{k}": v for k, v in scalars.items()})

    def _plan(self) -> None:
        """Re-estimate the run's length in steps from the pace so far. Every rank calls this
        at the same steps and uses the ranks' mean clock, so all of them keep one schedule."""
        s, tc = self.state, self.cfg.train
        if tc.lr_schedule == "inverse_sqrt" or not math.isfinite(self.budget):
            return
        elapsed = s.elapsed
        if self.group.active:
            elapsed = all_sum(elapsed, self.group, self.device) / self.group.world
        s.planned_steps = planned_steps(s.step, elapsed, self.budget, tc.max_steps)

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
        s, main = self.state, self.group.main
        self.bar = TrainingBar(self.cfg.train, s.step, s.elapsed, main, self.run_log.note)
        self.last_validated = -1
        self.board = TensorBoardLog(self.run_dir, self.cfg.train.tensorboard and main)
        self.startup_seconds = process_seconds()  # from the command's start to the first step
        with self.run_log.attached():  # again after __init__: no file stays open between
            try:
                self._loop()
                self._finish()
            finally:
                self.bar.close()
                self.board.close()
                self.data.close()
                for sig, handler in handlers.items():
                    signal.signal(sig, handler)
            self._write_summary()
            self.run_log.note(f"stopped at step {s.step}: {self.stop.message}")
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
            self.save_step()
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
        run = {
            "parameters": self.model.num_parameters(),
            "device": str(self.device),
            "dtype": str(self.dtype).split(".")[-1],
            "processes": self.group.world,
        }
        self.summary = summary(self.state, self.stop, run, self.startup_seconds)
        if self.group.main:
            text = json.dumps(self.summary, indent=1) + "\n"
            atomic_write_bytes(self.run_dir / "summary.json", text.encode())

    def close(self, finished: bool) -> None:
        """Tear down in order: the DDP wrapper (it holds the process
        group), then the group itself, after every rank has finished (`finished`: this rank
        ended normally, so the others are on their way to the same barrier). A group left for
        the interpreter's exit to destroy can abort the process after training succeeded."""
        self.data.close()
        self.net = self.updater.net = self.model
        gc.collect()
        close(self.group, barrier=finished)


def train(
    cfg: Config,
    resume: bool = False,
    init_from: str | Path | None = None,
    overwrite: bool = False,
) -> dict:
    trainer = Trainer(cfg, resume=resume, init_from=init_from, overwrite=overwrite)
    finished = False
    try:
        trainer.run()
        finished = True
    finally:
        trainer.close(finished)
    return trainer.summary
