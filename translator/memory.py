"""What the process knows about itself: its memory, its age, and handing free pages back to
the system. Standard library only, so anything may import it."""

from __future__ import annotations

import os
import sys


def memory_mb() -> dict[str, int]:
    """This process's resident memory now ("rss"), its peak ("peak") and the part of it that
    is not file-backed ("anon", where a memory map of the data does not count), in MiB."""
    fields = {"VmRSS": "rss", "VmHWM": "peak", "RssAnon": "anon"}
    out = {}
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name in fields:
                    out[fields[name]] = round(int(value.split()[0]) / 1024)
    except OSError:  # not Linux: the peak is all the standard library tells
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out["peak"] = round(peak / (2**20 if sys.platform == "darwin" else 1024))
    return out


def process_seconds() -> float:
    """Seconds since this process started (Linux), for start-up times."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = int(f.read().rpartition(")")[2].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def _libc():
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


_LIBC = _libc() if sys.platform.startswith("linux") else None


def release_free_memory() -> None:
    """Hand the allocator's free pages back to the system (glibc's malloc_trim).

    Batches of ever-changing shapes leave free holes inside glibc's heaps that the heap
    cannot shrink over, so a long run's resident size creeps up though it uses no more;
    malloc_trim returns the whole free pages inside them, where a plain free cannot."""
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is not None:
        trim(0)
