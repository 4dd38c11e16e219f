"""Checkpoint-folder I/O for the merge engine, kept apart from the arithmetic (as in mergekit).

Reading: safetensors headers are parsed directly, so validation touches no tensor data; tensor
data is read through mmap in chunks, and each chunk's pages are released right after use, so
the resident set stays near the chunks in flight rather than the model size.

Writing: the shard layout and every header are known before any data is computed (names, dtypes
and shapes come from the inputs), so each output shard's header is written first and tensor bytes
are streamed after it, chunk by chunk, without ever holding a whole tensor or shard.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
import struct
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from backend.errors import UserError

ST_DTYPES = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}
ST_NAMES = {v: k for k, v in ST_DTYPES.items()}
FLOAT_NAMES = {"F64", "F32", "F16", "BF16"}
AUX_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
    "added_tokens.json",
    "chat_template.jinja",
    "chat_template.json",
)
TEMPLATES_DIR = "additional_chat_templates"  # named chat templates (NAME.jinja), loaded with the tokenizer
MAX_HEADER = 100 << 20


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str  # safetensors name, e.g. BF16
    shape: tuple[int, ...]
    file: Path
    start: int  # absolute byte offset in file
    end: int

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT_NAMES


def read_header(path: Path) -> tuple[dict, int]:
    """(header dict, data start). Raises UserError on a corrupt or truncated file."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            raise UserError(f"{path} is not a safetensors file (shorter than 8 bytes)")
        n = struct.unpack("<Q", raw)[0]
        if n > min(MAX_HEADER, size - 8):
            raise UserError(f"{path} is corrupt or truncated: header claims {n} bytes, file has {size}")
        try:
            header = json.loads(f.read(n))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UserError(f"{path} has a corrupt safetensors header: {exc}") from exc
    data_start = 8 + n
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if data_start + meta["data_offsets"][1] > size:
            raise UserError(f"{path} is truncated: tensor {name} ends past the end of the file")
        if meta["dtype"] not in ST_DTYPES:
            raise UserError(f"{path}: tensor {name} has unsupported dtype {meta['dtype']}")
    return header, data_start


class CheckpointFolder:
    """A Hugging Face checkpoint folder: config plus single-file or sharded safetensors."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise UserError(f"checkpoint folder {self.folder} does not exist")
        config_path = self.folder / "config.json"
        if not config_path.is_file():
            raise UserError(f"{self.folder} has no config.json; is it a Hugging Face checkpoint folder?")
        self.config = json.loads(config_path.read_text())
        self.tensors: dict[str, TensorInfo] = {}
        for file in self._files():
            header, start = read_header(file)
            for name, meta in header.items():
                if name != "__metadata__":
                    lo, hi = meta["data_offsets"]
                    self.tensors[name] = TensorInfo(
                        name, meta["dtype"], tuple(meta["shape"]), file, start + lo, start + hi
                    )
        self._maps: dict[Path, mmap.mmap] = {}

    def _files(self) -> list[Path]:
        index = self.folder / "model.safetensors.index.json"
        if index.is_file():
            try:
                names = sorted(set(json.loads(index.read_text())["weight_map"].values()))
            except (json.JSONDecodeError, KeyError) as exc:
                raise UserError(f"{index} is not a valid safetensors index: {exc}") from exc
            missing = [n for n in names if not (self.folder / n).is_file()]
            if missing:
                raise UserError(f"{self.folder}: shard {missing[0]} named in the index is missing")
            return [self.folder / n for n in names]
        single = self.folder / "model.safetensors"
        if single.is_file():
            return [single]
        raise UserError(f"{self.folder} has no model.safetensors or model.safetensors.index.json")

    @property
    def model_type(self) -> str | None:
        return self.config.get("model_type")

    @property
    def ties_embeddings(self) -> bool:
        return bool(self.config.get("tie_word_embeddings", False))

    def resolve(self, name: str) -> TensorInfo:
        """A tensor by name; a tied lm_head missing from the file is the input embedding."""
        if name in self.tensors:
            return self.tensors[name]
        if name == "lm_head.weight" and self.ties_embeddings:
            for alias in ("model.embed_tokens.weight", "transformer.wte.weight"):
                if alias in self.tensors:
                    return self.tensors[alias]
        raise KeyError(name)

    def read_chunk(self, info: TensorInfo, lo: int, hi: int, out: torch.Tensor | None = None) -> torch.Tensor:
        """Elements [lo, hi) of a tensor, flattened, copied into `out` (or a fresh tensor)."""
        mm = self._maps.get(info.file)
        if mm is None:
            with open(info.file, "rb") as f:
                mm = self._maps[info.file] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        dtype = ST_DTYPES[info.dtype]
        item = torch.empty((), dtype=dtype).element_size()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a read-only buffer: we copy before anyone writes
            view = torch.frombuffer(mm, dtype=dtype, count=hi - lo, offset=info.start + lo * item)
        chunk = view.clone() if out is None else out.copy_(view)
        _release(mm, info.start + lo * item, (hi - lo) * item)
        return chunk

    def close(self) -> None:
        for mm in self._maps.values():
            mm.close()
        self._maps.clear()


def _release(mm: mmap.mmap, start: int, length: int) -> None:
    """Drop the pages just read from our resident set; they stay in the page cache."""
    page = mmap.PAGESIZE
    lo = start - start % page
    try:
        mm.madvise(mmap.MADV_DONTNEED, lo, start + length - lo)
    except (OSError, ValueError):
        pass


def content_hash(ckpt: CheckpointFolder) -> str:
    """sha256 of config.json and every safetensors file, cached by (path, size, mtime)."""
    files = [*sorted({t.file for t in ckpt.tensors.values()}), ckpt.folder / "config.json"]
    stamp = [(str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns) for f in files]
    cache_file = Path(os.environ.get("FLAB_CACHE", Path.home() / ".cache" / "frontier-lab")) / "hashes.json"
    key = hashlib.sha256(json.dumps(stamp).encode()).hexdigest()
    try:
        known = json.loads(cache_file.read_text())
    except (OSError, json.JSONDecodeError):
        known = {}
    if key in known:
        return known[key]
    digest = hashlib.sha256()
    for f in files:
        with open(f, "rb") as fh:
            while block := fh.read(16 << 20):
                digest.update(block)
    known[key] = digest.hexdigest()
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known))
        tmp.replace(cache_file)
    except OSError:
        pass  # a read-only home only costs a re-hash next time
    return known[key]


def aux_files(folder: str | Path, names: tuple[str, ...] = AUX_FILES) -> list[str]:
    """The files of `names` present in the folder, then its named chat templates, as relative paths."""
    folder = Path(folder)
    named = sorted(f"{TEMPLATES_DIR}/{f.name}" for f in (folder / TEMPLATES_DIR).glob("*.jinja") if f.is_file())
    return [n for n in names if (folder / n).is_file()] + named


def copied_files_hash(folder: str | Path) -> str:
    """sha256 of what a merged folder copies from this input (copy_aux_files): each file present, by
    name and bytes. A merge cached before an input gained or changed a chat template, tokenizer or
    generation config has another hash, so it is merged again."""
    digest = hashlib.sha256()
    for name in aux_files(folder):
        f = Path(folder) / name
        digest.update(f"{name}\0{f.stat().st_size}\0".encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()


TOKENIZER_FILES = tuple(n for n in AUX_FILES if n not in ("config.json", "generation_config.json"))


def tokenizer_difference(a: str | Path, b: str | Path) -> str | None:
    """How the tokenizers of two checkpoint folders differ (what a prompt becomes: vocabulary,
    special tokens, chat template), or None. Byte-identical files are the same at once; otherwise
    both are loaded and compared, so files saved by two library versions that tokenize alike agree."""
    names = set(aux_files(a, TOKENIZER_FILES)) | set(aux_files(b, TOKENIZER_FILES))
    if all(_same_file(Path(a) / n, Path(b) / n) for n in names):
        return None
    from transformers import AutoTokenizer

    ta, tb = AutoTokenizer.from_pretrained(a), AutoTokenizer.from_pretrained(b)
    if ta.chat_template != tb.chat_template:
        return "chat template"
    if ta.get_vocab() != tb.get_vocab():
        return "vocabulary"
    if ta.special_tokens_map != tb.special_tokens_map:
        return "special tokens"
    return None


def _same_file(a: Path, b: Path) -> bool:
    if a.is_file() != b.is_file():
        return False
    return not a.is_file() or (a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes())


@dataclass
class OutTensor:
    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int


def plan_shards(tensors: list[OutTensor], shard_bytes: int) -> list[list[OutTensor]]:
    shards: list[list[OutTensor]] = [[]]
    size = 0
    for t in tensors:
        if shards[-1] and size + t.nbytes > shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(t)
        size += t.nbytes
    return shards


class ShardWriter:
    """Writes one output checkpoint: headers first, then tensor bytes in plan order."""

    def __init__(self, folder: Path, shards: list[list[OutTensor]], metadata: dict[str, str]):
        self.folder = folder
        self.shards = shards
        self.metadata = metadata
        n = len(shards)
        self.names = (
            ["model.safetensors"] if n == 1 else [f"model-{i + 1:05d}-of-{n:05d}.safetensors" for i in range(n)]
        )
        self._order = [(i, t) for i, shard in enumerate(shards) for t in shard]
        self._pos = -1  # index into _order of the tensor being written
        self._open_shard = -1
        self._file = None

    def _open(self, shard: int) -> None:
        if self._file is not None:
            os.close(self._file)
        header: dict = {"__metadata__": self.metadata}
        offset = 0
        for t in self.shards[shard]:
            header[t.name] = {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": [offset, offset + t.nbytes]}
            offset += t.nbytes
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * (-len(raw) % 8)  # keep the data 8-byte aligned, as safetensors does
        # A raw fd: BufferedWriter.write() of a large numpy buffer is ~15x slower than os.write.
        self._file = os.open(self.folder / self.names[shard], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        _write_all(self._file, struct.pack("<Q", len(raw)) + raw)
        self._open_shard = shard

    def _advance_to(self, name: str | None) -> None:
        while self._pos < len(self._order) - 1 and (self._pos < 0 or self._order[self._pos][1].name != name):
            self._pos += 1
            shard, tensor = self._order[self._pos]
            if shard != self._open_shard:
                self._open(shard)
            if tensor.name == name:
                return

    def write(self, name: str, chunk: torch.Tensor) -> None:
        """Append a chunk of tensor `name`; chunks of a tensor arrive in order, tensors in plan order."""
        if self._pos < 0 or self._order[self._pos][1].name != name:
            self._advance_to(name)
        _write_all(self._file, chunk.contiguous().view(torch.uint8).numpy())

    def close(self) -> None:
        self._advance_to(None)  # open (and so create) any shard that only holds empty tensors
        if self._file is not None:
            os.close(self._file)
            self._file = None
        if len(self.names) > 1:
            weight_map = {t.name: self.names[i] for i, shard in enumerate(self.shards) for t in shard}
            total = sum(t.nbytes for shard in self.shards for t in shard)
            index = {"metadata": {"total_size": total}, "weight_map": weight_map}
            (self.folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))


def _write_all(fd: int, data) -> None:
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view) :]


def copy_aux_files(src: Path, dst: Path, out_dtype: str | None) -> None:
    """Config, generation config and tokenizer files (named chat templates too) come from the first input."""
    for name in aux_files(src):
        (dst / name).parent.mkdir(exist_ok=True)
        shutil.copy2(src / name, dst / name)
    if out_dtype and (dst / "config.json").is_file():
        config = json.loads((dst / "config.json").read_text())
        torch_name = {"F32": "float32", "BF16": "bfloat16", "F16": "float16", "F64": "float64"}[out_dtype]
        for key in ("torch_dtype", "dtype"):
            if key in config:
                config[key] = torch_name
        (dst / "config.json").write_text(json.dumps(config, indent=2))
