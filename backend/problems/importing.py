"""Importing a public set into the store: the one path behind the CLI and the dashboard's form.

Every testlib checker is compiled at import (once per source and header, cached on disk), so a
checker that does not compile is reported here, with its problem id, and the problem is stored
as unjudgeable instead of turning every program judged on it into a sandbox error later.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from backend.errors import UserError
from backend.grading.special import CheckerCompileError, compile_checker
from backend.problems import ccplus, lcb
from backend.records import Problem

if TYPE_CHECKING:  # duckdb loads with the store a command opens, not with `problems import --help`
    from backend.store import Store


@dataclass
class ImportReport:
    problems: int = 0
    tests: int = 0
    unjudgeable: dict[str, str] = field(default_factory=dict)  # problem id -> why

    def line(self, name: str) -> str:
        text = f"imported {self.problems} {name} problems ({self.tests} tests)"
        if self.unjudgeable:
            pid, why = next(iter(self.unjudgeable.items()))
            text += f"; {len(self.unjudgeable)} stored as unjudgeable, e.g. {pid}: {why}"
        return text


def mark_unjudgeable(problems: list[Problem], progress: bool = True) -> dict[str, str]:
    """Compile each distinct C++ checker (both cores, each in its own sandbox)."""
    by_source: dict[str, list[Problem]] = {}
    for p in problems:
        if p.checker == "special" and p.checker_source:
            by_source.setdefault(p.checker_source, []).append(p)

    def attempt(source: str) -> str | None:
        try:
            compile_checker(source)
        except CheckerCompileError as exc:
            return str(exc)
        return None

    bar = _bar(len(by_source), "compile checkers", progress)
    out = {}
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for source, error in zip(by_source, pool.map(attempt, by_source), strict=True):
            bar.update(1)
            for p in by_source[source] if error else []:
                p.judge_error = error
                out[p.id] = error
    bar.close()
    return out


def _bar(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="checker", disable=not enabled or total == 0)


def store_built(store: Store, built: list, progress: bool = True) -> ImportReport:
    report = ImportReport(len(built), sum(len(t) for _, t in built))
    report.unjudgeable = mark_unjudgeable([p for p, _ in built], progress)
    store.replace_problems(built)
    return report


def import_lcb(store: Store, path: str | Path, flt: lcb.LCBFilter, progress: bool = True) -> ImportReport:
    return store_built(store, lcb.load(path, flt), progress)


def import_ccplus(store: Store, path: str | Path, flt: ccplus.CCPlusFilter, progress: bool = True) -> ImportReport:
    return store_built(store, ccplus.load(path, flt, flt.config), progress)


NAMES = {"lcb": "LiveCodeBench", "ccplus": "CodeContests+"}
# where each set is published, and which of its files a filter needs: LiveCodeBench has one JSONL
# file per release at the root (test.jsonl, test2.jsonl, …); CodeContests+ one folder of Parquet
# shards per config (ccplus_1x/part-00000-of-00020.parquet, …) beside the default shards
HUB_REPOS = {"lcb": "livecodebench/code_generation_lite", "ccplus": "ByteDance-Seed/Code-Contests-Plus"}


def hub_files(source: str, flt) -> list[str]:
    """The published files `flt` selects: a version's release files, or a config's shards."""
    if source == "lcb":
        return flt.files()
    if flt.config not in ccplus.CONFIGS:  # refused before any download
        raise UserError(f"unknown CodeContests+ config {flt.config!r}; choose one of {', '.join(ccplus.CONFIGS)}")
    return [f"ccplus_{flt.config}/*.parquet"]


def run_import(
    store: Store, source: str, path: str | Path | None, flt=None, progress: bool = True, hub: bool = False
) -> str:
    """The one import path of the CLI and the Launch page: one line saying what was stored. With
    `hub`, the published files are downloaded first (only those the filter needs) and read by the
    same loader as a local copy."""
    if source == "builtin":
        from backend.problems.build import build_builtin

        built = build_builtin(store, progress=progress)
        return f"imported {len(built)} builtin problems ({sum(len(t) for _, t in built)} tests)"
    flt = flt or (lcb.LCBFilter() if source == "lcb" else ccplus.CCPlusFilter())
    if hub and path:
        raise UserError(f"give the local path of {NAMES[source]} or --hub, not both")
    if hub:
        from backend.hub import download_dataset

        path = download_dataset(HUB_REPOS[source], hub_files(source, flt))
    if not path:
        raise UserError(f"importing {NAMES[source]} needs the local path of the dataset, or --hub to download it")
    if source == "lcb":
        return import_lcb(store, path, flt, progress).line(NAMES[source])
    return import_ccplus(store, path, flt, progress).line(NAMES[source])
