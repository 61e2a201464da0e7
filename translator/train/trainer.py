"""The training loop: AdamW, warmup and decay, label smoothing, clipping, accumulation,
autocast, validation and early stopping, a wall-clock budget, exact resume, fine-tuning from
a checkpoint, a moving average of the weights, step checkpoints for averaging, a graceful
stop on Ctrl-C or SIGTERM, and data-parallel training under torchrun (rank 0 validates,
writes and logs; stop decisions are shared so that no rank is left waiting). What the run
records is the TrainingReport's, where its files lie the RunDir's."""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import signal
import time
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path

import torch
from torch.nn.parallel import DistributedDataParallel

from translator.config import Config, save_config
from translator.errors import UserError
from translator.fileio.outputs import remove_own_tree
from translator.memory import process_seconds
from translator.models.checkpoint import Checkpoint
from translator.models.family import build_model
from translator.progress import TrainingBar
from translator.runtime import pick_device, pick_dtype, seed_everything, set_threads, to_device
from translator.train.compiling import training_net
from translator.train.distributed import all_sum, all_sum_, any_rank, close, init_from_env
from translator.train.ema import WeightEMA
from translator.train.feed import TrainingData
from translator.train.finetune import initial_checkpoint, resumed_config
from translator.train.report import StepStats, TrainingReport
from translator.train.resume import check_resumable, gather_rng, restore_rng, restore_training
from translator.train.run_dir import RunDir
from translator.train.schedule import planned_steps, scheduled_lr
from translator.train.state import RunLog, Stop, StopKind, TrainState
from translator.train.tensorboard_log import check_installed
from translator.train.update import Updater
from translator.train.validation import Validation, validate

log = logging.getLogger(__name__)


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
        self.run_dir = RunDir(cfg.run_dir)
        set_threads(tc.threads)
        seed_everything(cfg.seed)
        self.group, rank_device = init_from_env(tc.device)
        self.device = rank_device or pick_device(tc.device)
        if not self.group.main:
            logging.getLogger("translator").setLevel(logging.WARNING)
        self.stop: Stop | None = None
        self.unsynced_tokens = 0  # this rank's target tokens since the last sync()
        # what run() sets going: the bar, the step last validated, the command's start-up time
        self.bar: TrainingBar | None = None
        self.last_validated, self.startup_seconds = -1, 0.0
        made = not self.run_dir.path.exists()
        self.run_dir.create(hold=self.group.main)
        try:
            if not resume:
                self.run_dir.claim(overwrite, init_from)
            self.run_log = RunLog(self.run_dir.log, enabled=self.group.main, fresh=not resume)
            self.report = TrainingReport(self.run_dir, tc, self.group.main)
            with self.run_log.attached():
                self._setup(resume, init_from)
                if not resume and self.group.main:  # ready: the earlier run's files go
                    self.run_dir.clear()
                    self.run_log.restart()
        except BaseException:
            self.run_dir.release()  # a run that cannot start holds no folder
            if made and self.group.main:  # nor leaves one made for it (its error is shown)
                remove_own_tree(self.run_dir.path)
            raise

    def _setup(self, resume: bool, init_from: str | Path | None) -> None:
        saved = self._resume_checkpoint() if resume else None  # (may take its model section)
        cfg, tc = self.cfg, self.cfg.train
        self.dtype = pick_dtype(tc.dtype, self.device)
        given = saved.build_tokenizer(str(self.run_dir.last)) if saved else None
        start, given, cfg = initial_checkpoint(init_from, cfg) if init_from else (None, given, cfg)
        # an imported model's origin, card and licence go into every checkpoint of the run
        self.cfg, self.source = cfg, getattr(start or saved, "source", None)
        self.data = TrainingData(cfg, self.group, given, pin=self.device.type == "cuda")
        self.tokenizer = self.data.tokenizer
        self._build_model()
        if start:
            start.load_weights(self.model, str(init_from))
            log.info(f"starting from the weights of {init_from}")
        self.updater = Updater(self.model, self.net, cfg.train, self.group, self.device, self.dtype)
        self.optimizer = self.updater.optimizer
        self.ema = WeightEMA(self.model, tc.ema_decay) if tc.ema_decay else None
        self.dropout_paused = False  # the model is built with its dropout on
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
        self.model.never_output = tok.never_output(cfg.data.tags)
        # The model as training calls it: compiled if asked, wrapped for DDP under torchrun.
        ids = [self.device.index] if self.device.type == "cuda" else None
        wrap = partial(DistributedDataParallel, device_ids=ids) if self.group.active else None
        self.net = training_net(self.model, cfg.train.compile, wrap, cfg.train.attention)
        if self.group.active:
            torch.manual_seed(cfg.seed + 7919 * self.group.rank)  # own dropout masks per rank

    def _resume_checkpoint(self) -> Checkpoint:
        path = self.run_dir.resumable()
        saved = Checkpoint.load(path)
        self.cfg = resumed_config(self.cfg, saved.config)  # a fine-tuning config names no model
        check_resumable(saved, self.cfg, self.group.world, str(path))
        return saved

    def _restore(self, saved: Checkpoint) -> None:
        where = str(self.run_dir.last)
        saved.load_weights(self.model, where)
        restore_training(saved, where, self.updater, self.ema, self.report, self.data.digest)
        restore_rng(saved, self.group, where)
        self.stop = self.report.stopping.stop(self.state)  # a run that stopped early stays so
        st = self.state  # (epochs and batches counted from 1, as logged)
        log.info(
            f"resumed from step {st.step} (epoch {st.epoch + 1}, batch {st.batch_in_epoch + 1})"
        )

    @property
    def state(self) -> TrainState:
        """The run's progress and statistics, which checkpoints carry."""
        return self.report.state

    # -- checkpoints -------------------------------------------------------------------------
    def save_last(self) -> None:
        """last.pt, written at the same step by every rank: what translating needs and what
        resuming needs, every rank's random state and the moving average too."""
        self._save(self.run_dir.last, resumable=True)

    def save_best(self) -> None:
        """best.pt (rank 0 alone): what translating needs, the averaged weights with EMA."""
        weights = self.ema.weights() if self.ema is not None else None
        self._save(self.run_dir.best, weights=weights)

    def save_step(self) -> None:
        """The step checkpoint (the weights as trained, for `translator average`), then (once
        it is whole) the oldest ones beyond keep_checkpoints."""
        keep, step = self.cfg.train.keep_checkpoints, self.state.step
        if keep and self.group.main:
            self._save(self.run_dir.step_checkpoint(step))
            self.run_dir.prune_step_checkpoints(keep, step)

    def _save(self, path: Path, resumable: bool = False, weights: dict | None = None) -> None:
        rng = gather_rng(self.group) if resumable else []  # a collective: every rank calls it
        if not self.group.main:
            return
        Checkpoint(
            config=self.cfg.to_dict(),
            tokenizer=self.tokenizer.state(),
            model=weights if weights is not None else self.model.state_dict(),
            progress={**asdict(self.state), "data_digest": self.data.digest},
            rng=rng,
            optimizer=self.optimizer.state_dict() if resumable else None,
            scaler=self.updater.scaler.state_dict() if resumable else None,
            ema=self.ema.state_dict() if resumable and self.ema else None,
            source=self.source,
        ).save(path)

    # -- validation --------------------------------------------------------------------------
    def validate(self) -> Validation:
        """The dev set scored with the moving average of the weights when there is one."""
        devs, step = self.data.devs, self.state.step
        with self.ema.applied() if self.ema else contextlib.nullcontext():
            return validate(
                self.model, self.tokenizer, self.cfg, devs, self.device, self.dtype, step
            )

    def validate_and_keep_best(self) -> None:
        if not self.group.main:  # rank 0 validates; its stop decision reaches the others
            return
        if self.report.validated(self.validate(), self.data.devs[0].pairs):
            self.save_best()
        self.stop = self.report.stopping.stop(self.state) or self.stop

    # -- the loop ----------------------------------------------------------------------------
    def _next_batches(self):
        """The next `accumulate` batches, in the saved data order."""
        return self.data.next(self.state, self.cfg.train.accumulate)

    def train_step(self) -> int:
        """One optimizer step, skipped on the device if its loss is not finite; returns this
        rank's target tokens. Nothing here waits for the device: sync() reads the results."""
        s, tc, g = self.state, self.cfg.train, self.group
        self._late_dropout(s.epoch < tc.dropout_after_epochs)  # (the epoch of the next batch)
        micro = self._next_batches()
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

    def _late_dropout(self, paused: bool) -> None:
        if paused != self.dropout_paused:
            self.model.pause_dropout(paused)
            self.dropout_paused = paused
            log.info(f"epoch {self.state.epoch + 1}: dropout {'off' if paused else 'on'}")

    def _all_tokens(self, local_tokens: int):
        """Target tokens of this step on all ranks: a device tensor under torchrun."""
        if not self.group.active:
            return float(local_tokens)
        return all_sum_(to_device(torch.tensor(float(local_tokens)), self.device), self.group)

    def sync(self, logged: bool = False) -> StepStats:
        """Read the device-side results since the last sync: mean loss, skipped steps and
        target tokens (all ranks), and stop a diverged run. Called at the same steps on
        every rank, since under torchrun it is a collective."""
        stats = self.updater.read(logged)
        tokens = int(all_sum(self.unsynced_tokens, self.group, self.device))
        self.unsynced_tokens = 0
        stats = replace(stats, tokens=tokens)
        self.report.synced(stats)
        return stats

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
        stats = self.sync(logged=True)
        self._plan()
        rate, lr = stats.tokens / max(seconds, 1e-9), self.optimizer.param_groups[0]["lr"]
        self.report.logged(stats, lr, rate)
        bar.report(s.step, s.elapsed, stats.loss, lr, rate)

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
            save_config(self.cfg, self.run_dir.config)
        handlers = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        self.model.train()
        s, main = self.state, self.group.main
        if s.history and s.history[-1]["step"] == s.step:  # a resumed run's last step
            self.last_validated = s.step  # is validated already: not twice in the record
        self.bar = TrainingBar(self.cfg.train, s.step, s.elapsed, main, self.run_log.note)
        self.report.board.open()
        self.startup_seconds = process_seconds()  # from the command's start to the first step
        with self.run_log.attached():  # again after __init__: no file stays open between
            try:
                self._loop()
                self._finish()
            finally:
                self.bar.close()
                self.report.close()
                self.data.close()
                self.run_dir.release()
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
            self.save_last()
            self.save_step()
            synced = True
        return synced

    def _finish(self) -> None:
        """After the last step: validate it (unless interrupted), then write last.pt."""
        s = self.state
        interrupted = self.stop.kind is StopKind.INTERRUPTED
        if self.last_validated != s.step and not interrupted and s.step > 0:
            start = time.perf_counter()
            self.validate_and_keep_best()
            s.elapsed += time.perf_counter() - start  # (wall clock, as each validation's)
        self.save_last()
        if self.stop.kind is StopKind.TIME_BUDGET:
            self.bar.stopped(s.step)

    def _write_summary(self) -> None:
        run = {"parameters": self.model.num_parameters(), "device": str(self.device),
               "dtype": str(self.dtype).split(".")[-1], "processes": self.group.world}  # fmt: skip
        self.report.write_summary(self.stop, run, self.startup_seconds)

    @property
    def summary(self) -> dict:
        """summary.json's content, once run() has written it."""
        return self.report.summary

    def close(self, finished: bool) -> None:
        """Tear down in order: the DDP wrapper (it holds the process group), then the group
        itself, after every rank has finished (`finished`: this rank ended normally, so the
        others are on their way to the same barrier). A group left for the interpreter's exit
        to destroy can abort the process after training succeeded."""
        self.data.close()
        self.net = self.updater.net = self.model
        gc.collect()
        close(self.group, barrier=finished)
