"""Data-parallel training under torchrun (env:// rendezvous, so Slurm's srun works too).

With WORLD_SIZE unset or 1 everything here is a no-op, so the single-process
path is the same code. Every rank reads the same epoch order (it depends only
on seed and epoch) and takes every world-th batch, cut to the same count, so
ranks never wait on one another for a missing batch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class Group:
    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.world > 1


def init_from_env(device_name: str) -> tuple[Group, torch.device | None]:
    """Join the process group torchrun describes; returns the group and this rank's device."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Group(), None
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = torch.cuda.is_available() and device_name in ("auto", "cuda")
    if not dist.is_initialized():
        dist.init_process_group("nccl" if use_cuda else "gloo", init_method="env://")
    device = None
    if use_cuda:
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    return Group(rank, world, local), device


def shard(batches: list, group: Group) -> list:
    """This rank's share of an epoch: every world-th batch, the same count on every rank."""
    if not group.active:
        return batches
    usable = len(batches) // group.world * group.world
    return batches[group.rank : usable : group.world]


def all_sum(value: float, group: Group, device: torch.device) -> float:
    if not group.active:
        return value
    t = torch.tensor([float(value)], dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return float(t.item())


def all_sum_(t: torch.Tensor, group: Group) -> torch.Tensor:
    """Sum a device tensor over ranks in place; the host does not wait for it."""
    if group.active:
        dist.all_reduce(t)
    return t


def all_gather(obj, group: Group) -> list:
    """Every rank's `obj` (picklable), in rank order, on every rank: a collective."""
    if not group.active:
        return [obj]
    out: list = [None] * group.world
    dist.all_gather_object(out, obj)
    return out


def any_rank(flag: bool, group: Group, device: torch.device) -> bool:
    """True on every rank when it is true on one (stop decisions, so that no rank hangs)."""
    return all_sum(1.0 if flag else 0.0, group, device) > 0


def close(group: Group, barrier: bool = True) -> None:
    """Leave the process group; with `barrier`, only once every rank has come this far."""
    if group.active and dist.is_initialized():
        if barrier:
            dist.barrier()
        dist.destroy_process_group()
