"""Output folders and files: translator replaces or removes only what it wrote itself.

Every folder a command writes carries MARKER, a small JSON file that lists the names the
command wrote there. A folder that exists without it and holds anything is the user's (or
another program's) and is refused; in a marked folder only the listed names are replaced or
removed, so a file the user put beside them stays. An output file is refused when it is
also one of the command's inputs or another of its outputs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from translator.errors import UserError
from translator.fileio import atomic_write_bytes, file_digest, real_target, running
from translator.fileio.recognise import recognised

MARKER = ".translator-output.json"  # a name no other program writes


# ---------------------------------------------------------------- the marker


def owned(folder: Path) -> set[str] | None:
    """The names translator wrote in `folder`, or None where it carries no marker."""
    try:
        listed = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))["files"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return set()  # marked, but the list is unreadable: nothing is known to be ours
    return {name for name in listed if isinstance(name, str)}


def mark(
    folder: Path, names: Iterable[str], command: str = "", scratch: bool = False,
    stamps: bool | dict = False,
) -> None:  # fmt: skip
    """Write the marker of `folder`, listing `names`; `scratch`: all of it is translator's
    work in progress, to remove whole; `stamps`: True: with each file's size, modification
    time and digest, so that a file edited since is known to be the user's (edited); a dict:
    those stamps (name -> stamp) of the listed names."""
    record = {"written_by": f"translator {command}".strip(), "files": sorted(set(names))}
    if scratch:
        record["scratch"] = True
    if stamps is True:
        stamps = {n: _stamp(Path(folder) / n) for n in record["files"]
                  if (Path(folder) / n).is_file()}  # fmt: skip
    if stamps:
        record["stamps"] = {n: s for n, s in stamps.items() if n in record["files"]}
    atomic_write_bytes(Path(folder) / MARKER, json.dumps(record, indent=1).encode())


def _stamp(path: Path) -> list:
    info = path.stat()
    return [info.st_size, info.st_mtime_ns, file_digest(path)]


def _changed(path: Path, stamp: list) -> bool:
    """Whether the file differs from its stamp: by size, or, where its time moved (a copy,
    a checkout), by its contents' digest (a stamp without one: by the time alone)."""
    info = path.stat()
    if info.st_size != stamp[0]:
        return True
    if info.st_mtime_ns == stamp[1]:
        return False
    return len(stamp) < 3 or file_digest(path) != stamp[2]


def _stamps(folder: Path) -> dict:
    """The stamps the marker of `folder` holds (name -> stamp; none: {})."""
    try:
        stamps = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))["stamps"]
        assert isinstance(stamps, dict)
    except (OSError, ValueError, KeyError, TypeError, AssertionError):
        return {}
    return stamps


def edited(folder: Path) -> list[str]:
    """The files of `folder` that differ from what its marker recorded when translator wrote
    them (_changed): the user's edits, such as a model card."""
    return sorted(name for name, stamp in _stamps(folder).items()
                  if (Path(folder) / name).is_file() and _changed(Path(folder) / name, stamp))  # fmt: skip


def refuse_edited(folder: Path, names: Iterable[str] | None = None) -> None:
    """A UserError naming the first file of `folder` (of `names`, where given) edited since
    translator wrote it: replacing it would lose the user's work."""
    among = None if names is None else set(names)
    changed = [n for n in edited(folder) if among is None or n in among]
    if changed:
        raise UserError(
            f"{Path(folder) / changed[0]} was changed since translator wrote it; refusing to "
            "replace it",
            "move it away or give another folder",
        )


def _writer(folder: Path) -> str:
    """The command whose marker `folder` carries ("" where unknown)."""
    try:
        found = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))
        return str(found.get("written_by", "")).removeprefix("translator").strip()
    except (OSError, ValueError, AttributeError):
        return ""


def record(
    folder: Path, names: Iterable[str], command: str = "", stamp: Iterable[str] = (),
    forget: Iterable[str] = (),
) -> None:  # fmt: skip
    """Add `names` to the marker of `folder`, keeping the stamps it holds (mark) except those
    of `forget` (files about to be rewritten); the files of `stamp` (just written, and not
    edited since) are stamped anew."""
    dropped = set(forget) | set(stamp)
    stamps = {n: s for n, s in _stamps(folder).items() if n not in dropped}
    stamps |= {n: _stamp(Path(folder) / n) for n in stamp if (Path(folder) / n).is_file()}
    mark(folder, (owned(folder) or set()) | set(names), command, stamps=stamps)


def _entries(folder: Path) -> list[str]:
    """The names in `folder` other than its marker and a marker being written (another
    process, such as another rank of the same run, may be marking the folder now)."""
    return sorted(p.name for p in folder.iterdir() if not _is_marker(p.name))


def _is_marker(name: str) -> bool:
    return name == MARKER or (name.startswith(f".{MARKER}.") and name.endswith(".tmp"))


def claim_folder(
    folder: Path,
    option: str,
    adopt: Callable[[Path], Iterable[str] | None] | None = None,
    command: str = "",
    make: bool = True,
) -> set[str]:
    """Make `folder` an output folder of this command and return the names translator wrote
    there: a missing folder is made, an empty one marked; a folder that holds files without
    the marker is refused with a UserError naming `option`, unless `adopt(folder)` recognises
    it as translator's own work written without a marker and names the files it wrote there
    (they are then listed in the marker).
    `make=False`: a missing folder is left for replace_folder to put in place whole."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{option} {folder} is a file; give a folder")
    if not folder.exists() and not make:
        return set()
    if not folder.exists():
        try:
            folder.mkdir(parents=True, exist_ok=True)  # another rank may be making it
        except OSError as err:
            raise UserError(f"{option} {folder} cannot be created: {err.strerror}") from None
    found = owned(folder)
    entries = _entries(folder)
    writer = _writer(folder) if found is not None else ""
    if entries and command and writer and writer != command:
        raise UserError(
            f"{option} {folder} holds the output of translator {writer}, not of "
            f"translator {command}; refusing to write there",
            "give a new or empty folder",
        )
    if found is not None:
        return found
    adopted = adopt(folder) if entries and adopt is not None else None
    if entries and not adopted:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise UserError(
            f"{option} {folder} holds files translator did not write ({shown}); "
            "refusing to write there",
            "give a new or empty folder",
        )
    mark(folder, adopted or (), command)
    return set(adopted or ())


def require_owned(folder: Path, option: str) -> None:
    """A folder that exists must be one translator wrote (empty ones are fine)."""
    folder = Path(folder)
    if folder.is_dir() and owned(folder) is None and _entries(folder):
        raise UserError(
            f"{option} {folder} holds files translator did not write; refusing to write there",
            "give a new or empty folder",
        )


# ---------------------------------------------------------------- replacing a folder


def temporary_folder(target: Path) -> Path:
    """A fresh marked sibling of `target` to build the new contents in, named with this
    process's id. Another live process building `target` is refused; what killed ones
    left is cleared first (`_left_behind`)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _left_behind(target)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    tmp.mkdir()
    mark(tmp, (), scratch=True)
    return tmp


def _left_behind(target: Path) -> None:
    """Refuse where a live process is building `target`; else put back the old contents a
    swap killed between its two renames left aside (`target` missing), and remove the
    rest of what killed builds left (marked, so translator's)."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.tmp-(old-)?(\d+)")
    found = [(m, p) for p in target.parent.iterdir() if (m := pattern.fullmatch(p.name))]
    for m, _ in found:
        if int(m[2]) != os.getpid() and running(int(m[2])):
            raise UserError(
                f"{target} is being written by another command (process {m[2]})",
                "wait for it to finish, or write to another folder",
            )
    for m, path in sorted(found, key=lambda f: not f[0][1]):  # the old contents first
        if m[1] and not target.exists():
            os.replace(path, target)
        else:
            remove_own_tree(path)


@contextmanager
def building(target: Path, what: str = "export") -> Iterator[Path]:
    """A temporary folder (temporary_folder) to fill, renamed into `target`'s place once the
    block ends whole and removed where it fails; a failed write is one line naming target."""
    tmp = temporary_folder(target)
    try:
        yield tmp
        replace_folder(tmp, target, what, keep_edits=True)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UserError(
            f"cannot write the {what} to {target}: {err.strerror or err}",
            "check free disk space and that the folder is writable",
        ) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def remove_own_tree(folder: Path) -> None:
    """Delete `folder` where it is translator's scratch or holds nothing but what its
    marker lists."""
    listed = owned(folder)
    if listed is None:
        return
    try:
        scratch = json.loads((folder / MARKER).read_text(encoding="utf-8")).get("scratch")
    except (OSError, ValueError, AttributeError):
        scratch = False
    if scratch or set(_entries(folder)) <= listed:
        shutil.rmtree(folder, ignore_errors=True)


def replace_folder(tmp: Path, target: Path, command: str = "", keep_edits: bool = False) -> None:
    """Put the contents of the finished folder `tmp` into `target` (a claimed output folder
    or none): the names translator wrote there before are replaced or removed, every other
    file stays. Where `target` holds only translator's files the two folders are swapped by
    renames, so a reader finds the old contents or the new, never a mixture. `keep_edits`
    (a folder people edit, an export): a file changed since translator wrote it is the
    user's, and replacing the folder is refused (prepared data, translator's own cache,
    is rebuilt whatever happened to it)."""
    new = _entries(tmp)
    mark(tmp, new, command, stamps=keep_edits)
    if not target.exists():
        os.replace(tmp, target)
        return
    mine = owned(target)
    if mine is None:
        raise UserError(f"{target} holds files translator did not write; refusing to replace it")
    if keep_edits:
        refuse_edited(target)
    theirs = [name for name in _entries(target) if name not in mine]
    clash = sorted(set(theirs) & set(new))
    if clash:
        raise UserError(
            f"{target / clash[0]} was not written by translator; refusing to replace it",
            "move it away or give another folder",
        )
    if not theirs:
        stale = target.parent / f".{target.name}.tmp-old-{os.getpid()}"
        os.replace(target, stale)
        os.replace(tmp, target)
        shutil.rmtree(stale, ignore_errors=True)  # holds only what translator wrote
        return
    for name in sorted(mine - set(new)):
        _remove(target / name)
    for name in new:
        _remove(target / name)
        os.replace(tmp / name, target / name)
    os.replace(tmp / MARKER, target / MARKER)  # (renamed files keep the stamps it holds)
    shutil.rmtree(tmp, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


# ---------------------------------------------------------------- output files


def _same(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def distinct_outputs(
    outputs: dict[str, str | Path | None], inputs: dict[str, str | Path | None] | None = None
) -> None:
    """Refuse an output file (option -> path) that is also one of the inputs or another of
    the outputs: writing it would destroy what the command reads or has just written."""
    seen: list[tuple[str, Path]] = []
    ins = [(o, Path(p)) for o, p in (inputs or {}).items() if p is not None and str(p) != "-"]
    for option, path in outputs.items():
        if path is None or str(path) == "-":
            continue
        path = Path(path)
        for other, known in ins:
            if _same(path, known):
                raise UserError(
                    f"{option} {path} is also the input {other}; writing it would destroy "
                    "what the command reads",
                    f"give {option} another file",
                )
        for other, known in seen:
            if _same(path, known):
                raise UserError(
                    f"{option} {path} is the same file as {other}; each output needs its own",
                    f"give {option} another file",
                )
        seen.append((option, path))


def kept(path: str | Path) -> str | None:
    """What an existing file `path` (a link followed) is, where a text or a picture must not
    replace it: a PyTorch checkpoint (a run's last.pt holds its training), a file that a
    folder translator wrote lists as its own (`owned`), or that such a folder without the
    list is known by (fileio/recognise.py), or the list; None for any other."""
    import zipfile

    path = real_target(path)
    if not path.is_file():
        return None
    if path.name == MARKER:
        return f"the list of the files translator wrote in {path.parent}"
    ours = owned(path.parent)
    if ours is not None and path.name in ours:
        return f"a file of the folder translator wrote in {path.parent}"
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x80\x02":  # torch.save's legacy pickle format
        return "a PyTorch checkpoint"
    with suppress(zipfile.BadZipFile, OSError):
        if magic == b"PK" and any(
            n.endswith("/data.pkl") for n in zipfile.ZipFile(path).namelist()
        ):
            return "a PyTorch checkpoint"
    if ours is None and path.name in (recognised(path.parent) or ()):
        return f"a file of the folder translator wrote in {path.parent}"
    return None
