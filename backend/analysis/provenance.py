"""How a number was made, in words: the experiment, the filters and contest window, the tier rule,
the solved threshold, the averaging, the seeds scheme, the database file, the tool's version and
commit, and when. `analyze` prints it, and the dashboard puts it under every figure's title, atop
every CSV, in Parquet metadata, inside every exported image and in the export zip's manifest.json,
so an export of a filtered view never reads as an unfiltered one, and names the code that made it."""

from __future__ import annotations

import datetime
import functools
import importlib.metadata
import json
import subprocess
import time
import tomllib
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from backend.vocab import SOLVED_AT

CHECKOUT = Path(__file__).resolve().parents[2]
REVISION_TTL_S = 60  # a running dashboard sees a commit (or an edit) within a minute

AVERAGING_WORDS = {"per_problem": "per problem, then averaged over problems", "per_sample": "pooled over samples"}


@functools.cache
def tool_version() -> str:
    """frontier-lab's version: the installed package's, else the checkout's pyproject.toml."""
    try:
        return importlib.metadata.version("frontier-lab")
    except importlib.metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return tomllib.loads(pyproject.read_text())["project"]["version"]


def source_revision() -> str:
    """Which code made a number: "commit 1a2b3c4d5e6f" (", with uncommitted changes" when the checkout
    differs from it) for a git checkout, else the commit pip recorded for the installed package, else
    "no commit recorded". Read again at most once a minute."""
    now = time.monotonic()
    cached = _revision_cache.get("value")
    if cached is None or now - cached[0] > REVISION_TTL_S:
        cached = _revision_cache["value"] = (now, _read_revision())
    return cached[1]


_revision_cache: dict = {}


def _read_revision() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(CHECKOUT), *args], capture_output=True, text=True, timeout=10)
        if done.returncode:
            raise OSError(done.stderr.strip())
        return done.stdout.strip()

    if (CHECKOUT / ".git").exists():
        try:
            commit = git("rev-parse", "--short=12", "HEAD")
            dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
            return f"commit {commit}" + (", with uncommitted changes" if dirty else "")
        except (OSError, subprocess.SubprocessError):
            pass
    try:  # a `pip install git+…` records its commit here
        direct = importlib.metadata.distribution("frontier-lab").read_text("direct_url.json") or "{}"
        commit = json.loads(direct).get("vcs_info", {}).get("commit_id")
    except (importlib.metadata.PackageNotFoundError, ValueError):
        commit = None
    return f"commit {commit[:12]}" if commit else "no commit recorded"


def window_words(since: str | None, until: str | None) -> str:
    """The contest window in words: its dates (both included), the LiveCodeBench version it is, and
    that problems without a date are left out."""
    if not since and not until:
        return "every problem, with or without a contest date"
    from backend.problems.lcb import window_name

    name = window_name(since, until)
    dates = f"{since or 'the first'} … {until or 'the last'}"
    return (
        f"contest dates {dates}, both included"
        + (f" (LiveCodeBench {name}'s window)" if name else "")
        + "; problems without a contest date are left out"
    )


def undated_words(undated: int) -> str:
    """What a contest window leaves out for want of a date, in words ("12 problems have no date")."""
    have = "problem has" if undated == 1 else "problems have"
    return f"{undated} {have} no contest date and {'is' if undated == 1 else 'are'} left out of this window"


def empty_window_words(since: str | None, until: str | None, dates: dict | None) -> str:
    """One line for a contest window that leaves no problem: what the experiment's dates are instead."""
    window = f"{since or 'the first'} … {until or 'the last'}"
    dated, undated = (dates or {}).get("dated", 0), (dates or {}).get("undated", 0)
    if not dated:
        return (
            f"no problem of this experiment has a contest date (its {undated} problems have none), so the window "
            f"{window} leaves nothing; clear the window"
        )
    return (
        f"no judged problem of this experiment has a contest date in {window}: its {dated} dated problems run from "
        f"{dates['first']} to {dates['last']}"
        + (f" ({undated} have no date)" if undated else "")
        + "; widen the window"
    )


def tier_rule(tier: int | None) -> str:
    """The rule the failure shares use for time-outs on tiny inputs (AnalysisSpec.opt_min_tier)."""
    if tier is None:
        return "every time or memory failure (TLE/MLE) counts as an optimization failure (--opt-min-tier none)"
    return (
        f"a TLE/MLE whose first failing test is below tier {tier} (input shorter than 10^{tier - 1} characters) "
        f"counts as a correctness failure (--opt-min-tier {tier})"
    )


def seeds_scheme(common_seeds: bool | None) -> str:
    if common_seeds is None:
        return "not recorded"
    if common_seeds:
        return "common seeds (sample k of a problem drew the same sampling noise at every checkpoint)"
    return "disjoint seeds per checkpoint"


@dataclass(frozen=True)
class Provenance:
    """What a table or figure was computed from; `lines()` is the text every consumer prints."""

    experiment: str
    experiment_name: str | None = None
    difficulty: str | None = None
    platform: str | None = None
    setting: str | None = None
    opt_min_tier: int | None = None
    solved_at: float = SOLVED_AT
    averaging: str = "per_problem"
    common_seeds: bool | None = None
    version: str = ""
    samples_from: str | None = None  # an imported experiment's file (backend/samples/); None: sampled here
    since: str | None = None  # the contest window, both ends included (SampleFilter.since/until)
    until: str | None = None
    database: str | None = None  # the database file's name
    revision: str = ""  # source_revision() when empty
    made: str | None = None  # when the export was made (stamped()), or its day (dated())

    def stamped(self) -> Provenance:
        """The same, made now (UTC, to the second): for a CSV, a Parquet file or a manifest."""
        now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
        return replace(self, made=now.strftime("%Y-%m-%d %H:%M:%S UTC"))

    def dated(self) -> Provenance:
        """The same, made today (UTC): for a figure's subtitle, which the page and its export share."""
        return replace(self, made=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"))

    def tool(self) -> str:
        return f"frontier-lab {self.version or tool_version()}, {self.revision or source_revision()}"

    def filters(self) -> str:
        return ", ".join(
            f"{name} = {value or 'all'}"
            for name, value in (("difficulty", self.difficulty), ("platform", self.platform), ("setting", self.setting))
        )

    def fields(self) -> dict[str, str]:
        """Each part in words, by name (the manifest's `provenance`, the CSV header's lines)."""
        name = f"{self.experiment_name} ({self.experiment})" if self.experiment_name else self.experiment
        return {
            "experiment": name,
            **({"samples": f"imported from {self.samples_from}, judged here"} if self.samples_from else {}),
            "filters": self.filters(),
            "tier rule": tier_rule(self.opt_min_tier),
            "solved threshold": f"solved = at least {self.solved_at:.0%} of a problem's samples correct",
            "averaging": AVERAGING_WORDS.get(self.averaging, self.averaging),
            "seeds": seeds_scheme(self.common_seeds),
            "contest window": window_words(self.since, self.until),
            "database": self.database or "not recorded",
            "tool": self.tool(),
        } | ({"made": self.made} if self.made else {})

    def lines(self) -> list[str]:
        return [f"{key}: {value}" for key, value in self.fields().items()]

    def text(self) -> str:
        return "\n".join(self.lines())

    def csv_header(self) -> str:
        """The lines as `# ` comments, to stand above a CSV (pandas/polars read it with comment='#')."""
        return "".join(f"# {line}\n" for line in self.lines())

    def subtitle(self) -> str:
        """The short form under a figure's title: filters, tier rule, threshold, averaging, seeds, version."""
        tier = (
            "every TLE/MLE = optimization"
            if self.opt_min_tier is None
            else f"TLE/MLE below tier {self.opt_min_tier} = correctness"
        )
        seeds = {None: "seeds not recorded", True: "common seeds", False: "disjoint seeds"}[self.common_seeds]
        avg = "per-problem averaging" if self.averaging == "per_problem" else "pooled over samples"
        window = f" · contest dates {self.since or '…'} – {self.until or '…'}" if self.since or self.until else ""
        made = [self.database or "", self.made or ""]
        return (
            f"{self.filters()}{window} · tier rule: {tier} · solved ≥ {self.solved_at:.0%} · {avg} · {seeds} · "
            + " · ".join([self.tool(), *filter(None, made)])
        )

    def manifest(self) -> dict:
        """The raw values and their words, for the export zip's manifest.json."""
        values = asdict(self) | {
            "version": self.version or tool_version(),
            "revision": self.revision or source_revision(),
        }
        return {"provenance": self.fields(), "values": values}


def from_store(store, experiment: str, **choices) -> Provenance:
    """The experiment's name and seeds scheme from its stored row, and the database file's name, with
    the view's choices (difficulty, platform, setting, since, until, opt_min_tier, solved_at, averaging)."""
    from backend.records import Experiment
    from backend.sweep.spec import stored_spec

    row = store.get(Experiment, experiment)
    seeds = stored_spec(row.kind, row.spec).get("common_seeds") if row and row.spec else None
    imported = (row.spec or {}).get("samples_from") if row and row.kind == "import" else None
    return Provenance(
        experiment=experiment,
        experiment_name=row.name if row else None,
        common_seeds=seeds,
        samples_from=imported,
        database=Path(store.path).name,
        **choices,
    )
