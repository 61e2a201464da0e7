"""Reading a prepared folder (see `prepare`): its manifest checked for shape, every file
for size and SHA-1, and the arrays mapped. Anything off makes the folder "not current",
so `prepare` builds it again instead of trusting it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from translator.data import npyfile
from translator.data.batching import PairIds
from translator.data.corpus import Pair
from translator.data.tokenizer import Tokenizer
from translator.data.vocab import tokenizer_from_state
from translator.errors import UserError
from translator.fileio import file_digest
from translator.fileio.recognise import manifest_listed

FORMAT = 1  # bump when the folder layout changes
ARRAYS = ("src", "src_offsets", "tgt", "tgt_offsets", "cost")


@dataclass
class Prepared:
    folder: Path
    manifest: dict
    ids: PairIds
    tokenizer: Tokenizer
    dev: list[Pair]


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def manifest_problem(manifest) -> str | None:
    """Why `manifest` (parsed JSON) is not a manifest `prepare` wrote, or None: a hand-edited
    or truncated one is refused by its shape before any of its values is used."""
    if not isinstance(manifest, dict):
        return "not a JSON object"
    files = manifest.get("files")
    if not isinstance(files, dict):
        return "no 'files' table"
    for name, info in files.items():
        if (
            Path(name).name != name
            or not isinstance(info, dict)
            or not _is_count(info.get("bytes"))
            or not isinstance(info.get("sha1"), str)
        ):
            return f"its entry for {name!r} is not a size and a SHA-1"
    if not _is_count(manifest.get("pairs")):
        return "no pair count"
    tokenizer = manifest.get("tokenizer")
    if not isinstance(tokenizer, dict) or not isinstance(tokenizer.get("sha256"), str):
        return "no tokenizer fingerprint"
    if not isinstance(manifest.get("key"), str):
        return "no key"
    return None


def earlier_prepared(folder: Path) -> set[str] | None:
    """A prepared folder written without the output marker: its manifest lists every file
    in it (so adopting it as translator's loses no file of the user's)."""
    found = manifest_listed(folder)
    if found is None or manifest_problem(found[0]) is not None:
        return None
    names = {p.name for p in folder.iterdir()}
    return names if names <= found[1] else None


def check_prepared(folder: Path, key: str) -> tuple[Prepared | None, str]:
    """The prepared data in `folder` if it is whole and made for `key`; else why not."""
    path = folder / "manifest.json"
    if not path.is_file():
        return None, "absent"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None, "manifest.json is not readable"
    if isinstance(manifest, dict) and manifest.get("format") != FORMAT:
        return (
            None,
            f"made by translator {manifest.get('translator', '?')} (format {manifest.get('format')})",
        )
    problem = manifest_problem(manifest)
    if problem is not None:
        return None, f"manifest.json is not readable ({problem})"
    if manifest["key"] != key:
        return None, "made for other data or settings"
    for name, info in manifest["files"].items():
        p = folder / name
        if not p.is_file() or p.stat().st_size != info["bytes"]:
            return None, f"{name} is missing or has another size than when it was written"
        if file_digest(p, "sha1") != info["sha1"]:
            return None, f"{name} was changed after it was written"
    try:
        maps = [npyfile.Mapped(folder / f"{name}.npy") for name in ARRAYS]
        models = [(folder / f"{side}.model") for side in ("src", "tgt")]
        src, tgt = (m.read_bytes() if m.is_file() else None for m in models)
        tables = folder / "vocab.json"  # an imported model's piece tables, where it has them
        vocab = json.loads(tables.read_text(encoding="utf-8")) if tables.is_file() else None
        tokenizer = tokenizer_from_state({"src": src, "tgt": tgt, "vocab": vocab})
        dev = [tuple(json.loads(line)) for line in (folder / "dev.jsonl").open(encoding="utf-8")]
    except (OSError, ValueError, TypeError, UserError) as err:
        return None, f"unreadable ({err})"
    if len(maps[4].array) != manifest["pairs"] or (
        tokenizer.fingerprint() != manifest["tokenizer"]["sha256"]
    ):
        return None, "its arrays do not match its manifest"
    ids = PairIds(*(m.array for m in maps[:4]), cost=maps[4].array, maps=maps)
    return Prepared(folder, manifest, ids, tokenizer, dev), "ok"


def training_digest(prepared: list[Prepared]) -> str:
    """A digest of what training reads from prepared folders: every file's SHA-1 but the
    dev pairs'. Equal for the same training data, cleaning and tokenizer; a changed file
    (the same path, other lines) changes it."""
    files = [{name: entry["sha1"] for name, entry in p.manifest["files"].items()
              if name != "dev.jsonl"} for p in prepared]  # fmt: skip
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]
