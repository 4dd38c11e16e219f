"""How a number was made, in words: the experiment, the filters, the tier rule, the solved
threshold, the averaging, the seeds scheme and the tool's version. `analyze` prints it, and the
dashboard puts it under every figure's title, atop every CSV and in the export zip's manifest.json,
so an export of a filtered view never reads as an unfiltered one."""

from __future__ import annotations

import functools
import importlib.metadata
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from backend.vocab import SOLVED_AT

AVERAGING_WORDS = {"per_problem": "per problem, then averaged over problems", "per_sample": "pooled over samples"}


@functools.cache
def tool_version() -> str:
    """frontier-lab's version: the installed package's, else the checkout's pyproject.toml."""
    try:
        return importlib.metadata.version("frontier-lab")
    except importlib.metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return tomllib.loads(pyproject.read_text())["project"]["version"]


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
            "tool": f"frontier-lab {self.version or tool_version()}",
        }

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
        return (
            f"{self.filters()} · tier rule: {tier} · solved ≥ {self.solved_at:.0%} · {avg} · {seeds} · "
            f"frontier-lab {self.version or tool_version()}"
        )

    def manifest(self) -> dict:
        """The raw values and their words, for the export zip's manifest.json."""
        return {"provenance": self.fields(), "values": asdict(self) | {"version": self.version or tool_version()}}


def from_store(store, experiment: str, **choices) -> Provenance:
    """The experiment's name and seeds scheme from its stored row, with the view's choices
    (difficulty, platform, setting, opt_min_tier, solved_at, averaging)."""
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
        **choices,
    )
