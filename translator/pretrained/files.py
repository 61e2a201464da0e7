"""The files of a released model: a local folder or a Hugging Face hub name, its JSON files,
its weights (one file or shards), and its card and licence."""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from translator.errors import UserError, optional_import

# owner/name as the hub spells repositories; anything else that is not a folder is a path.
HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# (single file, index of shards) in the order transformers prefers them
WEIGHT_FILES = (
    ("model.safetensors", "model.safetensors.index.json"),
    ("pytorch_model.bin", "pytorch_model.bin.index.json"),
)


def resolve(source: str) -> tuple[Path, dict]:
    """The local folder of `source` and where it came from ({"folder"}, {"hub", "folder"},
    {"file"} for a release .zip, whose folder is temporary, or {"folder", "model"} for a
    Marian .npz, whose folder holds the rest)."""
    path = Path(source).expanduser()
    if path.is_dir():
        return path, {"folder": str(path.resolve())}
    if path.is_file() and path.suffix.lower() == ".zip":
        return _unzip(path), {"file": str(path.resolve())}
    if path.is_file() and path.suffix.lower() == ".npz":
        return path.parent, {"folder": str(path.parent.resolve()), "model": path.name}
    if path.exists():
        raise UserError(
            f"{source}: a file; translator import takes a model folder, a Marian .npz or "
            "release .zip, or a hub name such as Helsinki-NLP/opus-mt-de-en"
        )
    if not HUB_NAME.match(source):
        raise UserError(f"{source}: no such folder (nor a hub name such as owner/model)")
    return _download(source), {"hub": source}


class _Extracted(type(Path())):
    """The folder a .zip was extracted into: it is removed when the last reference to this
    path goes (the import is over) or when the process ends."""

    def __new__(cls, folder: str, keep):
        path = super().__new__(cls, folder)
        path._keep = keep  # a TemporaryDirectory, removed with the object that holds it
        return path


def _unzip(path: Path) -> Path:
    """A release .zip (OPUS-MT's: the files of a Marian model) extracted to a temporary
    folder; a zip without a model in it is a one-line error."""
    import tempfile
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
            if not any(n.lower().endswith(".npz") for n in names):
                raise UserError(
                    f"{path}: no Marian model (.npz) in the archive; translator imports "
                    "OPUS-MT release .zip files (the .npz, decoder.yml, vocabulary, .spm files)"
                )
            keep = tempfile.TemporaryDirectory(prefix="translator-import-")
            folder = Path(keep.name) / path.stem
            zf.extractall(folder)  # (extractall drops absolute paths and "..")
    except (zipfile.BadZipFile, OSError) as err:
        raise UserError(f"{path}: not a readable .zip ({type(err).__name__})") from None
    # a release zipped with its folder: that folder is the model's
    inner = list(folder.iterdir())
    if len(inner) == 1 and inner[0].is_dir():
        folder = inner[0]
    return _Extracted(str(folder), keep)


def first_sentence(text: str, most: int = 200) -> str:
    """`text`'s first sentence on one line, cut at a word within `most` characters."""
    text = " ".join(text.split())
    end = text.find(". ")
    text = text[: end + 1] if end >= 0 else text
    return text if len(text) <= most else text[:most].rsplit(" ", 1)[0] + " ..."


def _download(name: str) -> Path:
    hub = optional_import("huggingface_hub", "pretrained", "models from the Hugging Face hub")
    try:
        return Path(hub.snapshot_download(repo_id=name))
    except Exception as err:  # offline, unknown name, network: all the user's to fix
        reason = first_sentence(str(err)) or type(err).__name__
        raise UserError(
            f"{name}: not a folder here, and the Hugging Face hub did not give it ({reason})",
            "check the name and the connection (HF_HUB_OFFLINE=1 forbids downloads), or "
            "give the model's folder",
        ) from None


def read_json(folder: Path, name: str, required: bool = True) -> dict | None:
    path = folder / name
    if not path.is_file():
        if required:
            raise UserError(f"{folder}: {name} is missing (a model folder holds it)")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserError(f"{path}: not readable JSON ({' '.join(str(err).split())[:120]})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: a JSON object expected, got {type(data).__name__}")
    return data


def read_spm(folder: Path, name: str) -> bytes:
    """The bytes of the folder's sentencepiece model `name`, checked to be one, so that a
    damaged file is named here rather than as the checkpoint's later."""
    from translator.data.tokenizer import load_processor

    path = folder / name
    if not path.is_file():
        raise UserError(f"{folder}: {name} is missing (a model folder holds it)")
    data = path.read_bytes()
    try:
        load_processor(data)
    except Exception:  # sentencepiece and protobuf raise their own errors for a foreign file
        raise UserError(f"{path}: not a readable sentencepiece model") from None
    return data


def read_weights(folder: Path) -> dict[str, torch.Tensor]:
    """Every tensor of the model's weight file or of all its shards, by name."""
    for single, index in WEIGHT_FILES:
        if (folder / single).is_file():
            return _weights_of(folder / single)
        if (folder / index).is_file():
            shards = read_json(folder, index).get("weight_map")
            if not isinstance(shards, dict):
                raise UserError(f"{folder / index}: no 'weight_map' of weight names to files")
            out: dict[str, torch.Tensor] = {}
            for shard in sorted(set(map(str, shards.values()))):
                if not (folder / shard).is_file():
                    raise UserError(f"{folder}: {shard} is missing (named by {index})")
                out.update(_weights_of(folder / shard))
            return out
    raise UserError(f"{folder}: model.safetensors or pytorch_model.bin is missing (the weights)")


def _weights_of(path: Path) -> dict[str, torch.Tensor]:
    try:
        if path.name.endswith(".safetensors"):
            st = optional_import("safetensors.torch", "pretrained", "safetensors weight files")
            return dict(st.load_file(str(path)))
        found = torch.load(path, map_location="cpu", weights_only=True)
    except UserError:
        raise
    except Exception as err:  # a truncated or foreign file fails in the reader's own way
        raise UserError(f"{path}: not a readable weight file ({type(err).__name__})") from None
    if not isinstance(found, dict):
        raise UserError(f"{path}: not a weight file (names to tensors)")
    return found


def data_section(src_lang: str, tgt_lang: str) -> dict:
    """An imported model's data section: its languages and no corpus (data.dataset: none),
    so a command that reads data asks for it instead of reading the built-in demo."""
    return {"src_lang": src_lang, "tgt_lang": tgt_lang, "dataset": "none"}


def card(folder: Path) -> dict[str, str]:
    """The model card (README.md) and licence files of the folder, as texts."""
    out = {}
    for path in sorted(folder.iterdir()):
        name = path.name.upper()
        if path.is_file() and (name == "README.MD" or name.startswith(("LICENSE", "LICENCE"))):
            out[path.name] = path.read_text(encoding="utf-8", errors="replace")
    return out


def released_decoding(folder: Path) -> dict:
    """The decode section a release asks for, in translator's keys. transformers' generate,
    Marian and CTranslate2 all divide a hypothesis's log-probability by length ** alpha
    (decode.len_norm power); the beam and alpha are the release's own where it names them
    (generation_config.json or config.json; a native Marian decoder.yml's beam-size and
    normalize), else transformers' alpha of 1 and translator's beam; a negative alpha (which
    favours short outputs) becomes 0, the least translator's key takes. A folder translator
    exported also gives its length cap (decode.max_len_a, max_len_b)."""
    out: dict = {"len_norm": "power", "len_penalty": 1.0}
    for name in ("config.json", "generation_config.json"):  # the latter wins
        found = read_json(folder, name, required=False) or {}
        if isinstance(found.get("num_beams"), int) and found["num_beams"] >= 1:
            out["beam"] = found["num_beams"]
        if isinstance(found.get("length_penalty"), (int, float)):
            out["len_penalty"] = float(found["length_penalty"])
        ours = found.get("translator")  # (a folder translator exported: its length cap)
        for key in ("max_len_a", "max_len_b"):
            if isinstance(ours, dict) and isinstance(ours.get(key), (int, float)):
                out[key] = ours[key]
    marian = folder / "decoder.yml"
    if marian.is_file():
        import yaml

        try:
            found = yaml.safe_load(marian.read_text(encoding="utf-8")) or {}
        except (OSError, ValueError, yaml.YAMLError):
            found = {}  # the importer reports an unreadable decoder.yml
        if isinstance(found, dict):
            if isinstance(found.get("beam-size"), int) and found["beam-size"] >= 1:
                out["beam"] = found["beam-size"]
            if isinstance(found.get("normalize"), (int, float)):
                out["len_penalty"] = float(found["normalize"])
    out["len_penalty"] = max(0.0, out["len_penalty"])
    return out
