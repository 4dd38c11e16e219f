"""Hugging Face hub names for checkpoints and benchmarks, resolved to local folders.

A checkpoint field takes a local folder or `org/name[@revision]`; a name is downloaded with
`huggingface_hub.snapshot_download` (only the files a checkpoint is read from) into the hub cache,
which honours HF_HOME, HF_TOKEN, HF_HUB_OFFLINE and HF_ENDPOINT as every Hugging Face library does.
A job stores its names pinned to the commit they resolved to (`org/name@<sha>`), so a rerun or a
resume reads the same weights; a checkpoint's id stays its content hash (backend/merge/checkpoints.py),
so a hub copy and a local copy of the same files are one checkpoint.

`huggingface_hub` is imported inside the functions: a CLI `--help` loads none of it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from backend.errors import UserError

# What a checkpoint is read from (backend/merge/io.py, transformers, vLLM): config, weights,
# tokenizer, generation config and chat template; never .bin/.pt weights, optimizer states or
# other formats a repo may also hold.
CHECKPOINT_FILES = [
    "config.json",
    "generation_config.json",
    "*.safetensors",
    "*.safetensors.index.json",
    "tokenizer*",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "chat_template*",
]
# a checkpoint field's fields, on every spec that has one (sweep, eval, rollout, RL, merge)
CHECKPOINT_FIELDS = ("low", "high", "independent", "checkpoints", "checkpoint", "base")
_REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9]")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def hub_ref(ref: str) -> tuple[str, str | None] | None:
    """(repo, revision or None) when `ref` names a hub repo; None when it is a local folder. A
    folder that exists wins over a name spelled the same (`runs/low`); so does a path that starts
    with /, ., ~ or names more than one folder level."""
    text = str(ref).strip()
    if not text or text.startswith(("/", ".", "~")) or Path(text).exists():
        return None
    repo, _, revision = text.partition("@")
    return (repo, revision or None) if _REPO.fullmatch(repo) else None


def resolve_checkpoint(ref: str) -> Path:
    """The local folder of a checkpoint field's value: the folder itself, or the hub snapshot of
    `org/name[@revision]` (downloaded on first use, read from the cache after). The one place a
    checkpoint name becomes a path; jobs call it on the driver before any task runs."""
    parsed = hub_ref(ref)
    if parsed is None:
        return Path(str(ref).strip()).expanduser()
    repo, revision = parsed
    folder = _snapshot(repo, "model", revision, CHECKPOINT_FILES)
    if not any(folder.glob("*.safetensors")):
        raise UserError(
            f"{ref}: the hub repo has no .safetensors weights; convert its weights to safetensors "
            "(or pick a revision that has them)"
        )
    return folder


def pinned(ref: str) -> str:
    """A hub name with the commit it resolves to now (`org/name@<sha>`); a folder as given."""
    parsed = hub_ref(ref)
    if parsed is None:
        return ref
    return f"{parsed[0]}@{resolve_checkpoint(ref).name}"  # a snapshot folder is named by its commit


def _map_checkpoints(spec, fn):
    """The spec with fn applied to each checkpoint field; the same object when nothing changed."""
    update = {}
    for name in CHECKPOINT_FIELDS:
        value = getattr(spec, name, None)
        if isinstance(value, str) and value:
            new = fn(value)
        elif isinstance(value, list) and value:  # extra checkpoints may be LABEL=REF: the label stays
            new = [_keep_label(fn, v) for v in value]
        else:
            continue
        if new != value:
            update[name] = new
    return spec.model_copy(update=update) if update else spec


def labelled(entry: str) -> tuple[str, str | None]:
    """An extra checkpoint as a spec names it: "R_2=runs/r2" is the folder runs/r2 labelled R_2 (its
    reward, so the pages and the recovery statistic name it by what trained it); a bare folder keeps
    its folder name."""
    label, sep, path = entry.partition("=")
    return (path, label) if sep and label and path and "/" not in label else (entry, None)


def _keep_label(fn, entry: str) -> str:
    ref, label = labelled(entry)
    return f"{label}={fn(ref)}" if label else fn(ref)


def pin_checkpoints(spec):
    """The spec with each hub name pinned to its commit: what a job stores with its experiment."""
    return _map_checkpoints(spec, pinned)


def local_checkpoints(spec):
    """The spec with each checkpoint field a local folder: what the job's steps read."""
    return _map_checkpoints(spec, lambda ref: str(resolve_checkpoint(ref)))


def checkpoint_label(ref: str | Path) -> str:
    """A checkpoint's short name: `org/name@<sha7>` for a pinned hub name or a snapshot folder in
    the hub cache, else the folder's name."""
    parsed = hub_ref(str(ref))
    if parsed:
        repo, revision = parsed
        return f"{repo}@{revision[:7]}" if revision and _COMMIT.fullmatch(revision) else str(ref)
    path = Path(ref)
    if _COMMIT.fullmatch(path.name) and path.parent.name == "snapshots":
        repo = path.parent.parent.name.split("--", 1)[-1].replace("--", "/")
        return f"{repo}@{path.name[:7]}"
    return path.name


def download_dataset(repo: str, patterns: list[str], revision: str | None = None) -> Path:
    """The hub snapshot of a dataset repo, only the files matching `patterns`."""
    return _snapshot(repo, "dataset", revision, patterns)


def _snapshot(repo: str, repo_type: str, revision: str | None, patterns: list[str]) -> Path:
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    name = f"{repo}@{revision}" if revision else repo
    no_folder = " and no local folder by that name" if repo_type == "model" else ""  # a checkpoint field takes both
    try:
        folder = snapshot_download(repo, repo_type=repo_type, revision=revision, allow_patterns=patterns)
    except GatedRepoError:  # before RepositoryNotFoundError, its base class
        if os.environ.get("HF_TOKEN") or _stored_token():
            raise UserError(
                f"{name} is a gated repo and your token has no access; accept its terms on its hub page"
            ) from None
        raise UserError(f"{name} is a gated repo: accept its terms on its hub page, then set HF_TOKEN") from None
    except RepositoryNotFoundError:
        raise UserError(
            f"no {repo_type} repo {repo!r} on {constants.ENDPOINT}{no_folder} (a private repo needs HF_TOKEN)"
        ) from None
    except RevisionNotFoundError:
        raise UserError(f"{repo} has no revision {revision!r} (a branch, tag or commit)") from None
    except LocalEntryNotFoundError:  # offline, or the hub unreachable, and nothing cached
        if constants.HF_HUB_OFFLINE:
            raise UserError(
                f"{name} is not in the hub cache ({constants.HF_HUB_CACHE}) and HF_HUB_OFFLINE is set; "
                "download it once online"
            ) from None
        raise UserError(
            f"{name} is not in the hub cache{no_folder}, and {constants.ENDPOINT} cannot be reached"
        ) from None
    except HfHubHTTPError as exc:
        raise UserError(f"{name}: the hub answered {exc.response.status_code}; try again later") from None
    if not Path(folder).is_dir():  # nothing matched: snapshot_download names a folder it never made
        raise UserError(f"{name} holds none of the files needed ({', '.join(patterns[:3])} …)")
    return Path(folder)


def _stored_token() -> str | None:
    from huggingface_hub import get_token

    return get_token()
