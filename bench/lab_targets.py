"""The miniature lab's targets (issue: lab second build), measured on the committed artifacts:

- at every α in [−0.5, 1.5], the share of samples on the held-in problems that are broken programs
  (CE, or a run-time NameError / UnboundLocalError) — target at most 15 %; the held-out problems,
  which the model never saw, are reported apart;
- pass@16 of the SFT checkpoint on the held-in problems (a problem counts when any of its 16
  samples is correct) — target at least 50 % of them;
- `lab build` wall time — target at most 60 minutes on 2 cores;
- reward disagreement: the share of each GRPO run's rollouts that its two rewards (R_3 and R_inf)
  score differently, from the per-step metrics — target at least 15 % in each run;
- problem confusion: the share of samples that are another problem's program (the nearest SFT
  program over every problem's, backend/lab/styles.py) per α — target at most 5 % at each endpoint;
- separating problems (issue: lab third design; `backend/lab/separation.py`) — target at least 12,
  with at least 16 samples per α on each; a build judged under one limit for every problem did not
  measure this, and says so;
- the same confusion on the SFT checkpoint (the sweep's overlay), printed, so what SFT leaves can
  be told from what GRPO removes;
- as the rewards see it (issue #49): the first failing tier of the held-in samples that fail, by
  the SFT program they are a variant of, and whether R_3 and R_inf both score them 0; per problem,
  the first failing tier of its brute force and buggy-fast variants and which reward tells them
  apart (recorded by builds from G on; `--rejudge` judges the builtin programs now, under the
  build's recorded limits, for a build that did not record them);
- the fourth design's pre-registered tests (docs/lab-preregistration.md, build G), for a build with
  a withheld set: n on it, the frontier's parts on the withheld and kept sets, and the
  difference-in-differences of the correctness-failure change between them;
- and, printed, not targeted: for the endpoints' reason to differ, the share of brute-force-style
  programs per α on the held-in problems (backend/lab/styles.py); for the confusion's cause, the share of samples that
  restate their own problem's title, and how often a sample is broken with the title right and
  with it wrong.

    .venv/bin/python bench/lab_targets.py [--artifacts artifacts/lab] [--rejudge]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.alpha import alpha_label
from backend.lab.artifacts import import_results
from backend.lab.recipe import LabRecipe
from backend.lab.report import reward_disagreement
from backend.lab.separation import told_apart
from backend.lab.styles import STYLES, confusion_shares, restates_title, sample_styles, style_shares
from backend.outcomes import OutcomeClass
from backend.records import Checkpoint, Evaluation, Metric, Problem, Sample
from backend.store import Store

BROKEN_ERRORS = ("NameError", "UnboundLocalError")


def broken(e: Evaluation) -> bool:
    if e.verdict == "CE":
        return True
    if e.verdict != "RE":
        return False
    failing = next((t for t in e.test_results or [] if t.verdict == "RE"), None)
    return failing is not None and any(err in (failing.detail or "") for err in BROKEN_ERRORS)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--artifacts", type=Path, default=Path("artifacts/lab"))
    parser.add_argument("--rejudge", action="store_true", help="judge the programs' first failing tiers now")
    args = parser.parse_args()
    manifest = json.loads((args.artifacts / "recipe.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:  # the artifacts as `make run` sees them
        store = Store(Path(tmp) / "lab.duckdb")
        import_results(store, args.artifacts)
        report(store, manifest, args.rejudge)


def report(store: Store, manifest: dict, rejudge: bool = False) -> None:
    sweep = manifest["sweep_experiment"]
    alphas = {c.id: c.alpha for c in store.select(Checkpoint)}
    evals = store.select(Evaluation, {"experiment_id": sweep})
    held_in = set(manifest["held_in"])
    styles = style_shares(store, sweep, held_in).filter(style="brute")  # printed beside the held-in broken shares
    brute = {row["alpha"]: row["share"] for row in styles.iter_rows(named=True)}
    print(
        f"lab build {manifest['fingerprint']}: {manifest['timings_s']['total'] / 60:.1f} min on {manifest['machine']}"
    )
    print(
        "broken programs (CE, NameError, UnboundLocalError) per α on the held-in problems — target ≤ 15 % for α in "
        "[−0.5, 1.5]; held-out problems (never trained on) apart:"
    )
    worst = 0.0
    for alpha in sorted({alphas[e.checkpoint_id] for e in evals} - {None}):
        mine = [e for e in evals if alphas[e.checkpoint_id] == alpha and e.problem_id in held_in]
        unseen = [e for e in evals if alphas[e.checkpoint_id] == alpha and e.problem_id not in held_in]
        share = sum(map(broken, mine)) / len(mine)
        if -0.5 <= alpha <= 1.5:
            worst = max(worst, share)
        apart = f"   held-out broken {sum(map(broken, unseen)) / len(unseen):6.1%}" if unseen else ""
        print(
            f"  {alpha_label(alpha, spaced=True):>9}: broken {share:6.1%}   "
            f"brute-force-style {brute.get(alpha, 0.0):6.1%}{apart}"
        )
    sft = manifest["sft_checkpoint"]
    solved = {e.problem_id for e in evals if e.checkpoint_id == sft and e.outcome == OutcomeClass.CORRECT}
    share = len(solved & held_in) / len(held_in)
    print(f"worst broken share in [−0.5, 1.5]: {worst:.1%} (target ≤ 15 %: {'met' if worst <= 0.15 else 'NOT met'})")
    print(
        f"SFT pass@16 on held-in problems: {share:.1%} of {len(held_in)} "
        f"(target ≥ 50 %: {'met' if share >= 0.5 else 'NOT met'})"
    )
    minutes = manifest["timings_s"]["total"] / 60
    print(f"build time: {minutes:.1f} min (target ≤ 60: {'met' if minutes <= 60 else 'NOT met'})")
    separation_targets(manifest, evals)
    pressure_targets(store, manifest)
    confusion_targets(store, manifest)
    title_diagnostics(store, manifest, evals)
    first_failing_tiers(store, manifest, evals)
    program_tiers(manifest, rejudge)
    withheld_tests(store, manifest, evals)


def pressure_targets(store: Store, manifest: dict) -> None:
    low, high = manifest["recipe"]["low_reward"], manifest["recipe"]["high_reward"]
    print(f"reward disagreement ({low} vs {high}), share of rollouts — target ≥ 15 % in each RL run:")
    for experiment in manifest["rl_experiments"]:
        steps: dict[int, dict[str, float]] = {}
        for m in store.select(Metric, {"experiment_id": experiment}):
            steps.setdefault(m.step, {})[m.name] = m.value
        share = reward_disagreement(list(steps.values()), low, high)
        print(f"  {experiment}: {share:6.1%} over {len(steps)} steps ({'met' if share >= 0.15 else 'NOT met'})")


def confusion_targets(store: Store, manifest: dict) -> None:
    """On the held-in problems (the target), and apart on the held-out ones: a model never trained
    on a problem can only write another problem's program or a new one, so they are no target."""
    held_out = set(manifest.get("held_out") or [])
    print("problem confusion (another problem's program) per α, held-in problems — target ≤ 5 % at α = 0 and α = 1:")
    for row in confusion_shares(store, manifest["sweep_experiment"], set(manifest["held_in"])).iter_rows(named=True):
        mark = f" ({'met' if row['share'] <= 0.05 else 'NOT met'})" if row["alpha"] in (0.0, 1.0) else ""
        print(f"  {point(row)}: {row['share']:6.1%} of {row['samples']}{mark}")
    shares = confusion_shares(store, manifest["sweep_experiment"], held_out) if held_out else None
    if shares is not None and len(shares):
        print(
            "  held-out problems, reported apart: "
            + ", ".join(f"{point(r)} {r['share']:.1%}" for r in shares.iter_rows(named=True))
        )


def point(row: dict) -> str:
    """A confusion row's checkpoint: its α, or its label off the α axis (the SFT overlay)."""
    return f"{alpha_label(row['alpha'], spaced=True):>9}" if row["alpha"] is not None else row["label"]


def title_diagnostics(store: Store, manifest: dict, evals: list[Evaluation]) -> None:
    """Printed, not targeted: a sample that restates another problem's title goes on to write that
    problem's program, so these say where the confusion comes from."""
    restatement = LabRecipe.from_dict(manifest["recipe"]).restatement
    if not restatement:
        return
    titles = {p.id: p.title for p in store.select(Problem)}
    ordered = sorted(store.select(Checkpoint), key=lambda c: (c.alpha is None, c.alpha or 0.0))  # SFT last
    labels = {c.id: point({"alpha": c.alpha, "label": c.label}) for c in ordered}
    verdicts = {(e.checkpoint_id, e.problem_id, e.sample_idx): broken(e) for e in evals}
    held_in, counts = set(manifest["held_in"]), {label: Counter() for label in labels.values()}
    for s in store.select(Sample, {"experiment_id": manifest["sweep_experiment"]}):
        if s.problem_id in held_in:
            right = restates_title(s.completion, titles[s.problem_id], restatement)
            counts[labels[s.checkpoint_id]][right, verdicts[s.checkpoint_id, s.problem_id, s.sample_idx]] += 1
    print("own title restated, held-in problems (printed, not targeted), and broken with the title right / wrong:")
    for label, c in counts.items():
        if not c:
            continue  # an endpoint checkpoint: swept through its α, not by itself
        right, wrong = c[True, False] + c[True, True], c[False, False] + c[False, True]
        print(
            f"  {label}: {right / (right + wrong):6.1%} restated   broken {c[True, True] / max(right, 1):6.1%} / "
            f"{c[False, True] / max(wrong, 1):6.1%}"
        )


def separation_targets(manifest: dict, evals: list[Evaluation]) -> None:
    separating = manifest.get("separating")
    if separating is None:
        print("separating problems: not measured (this build judged every problem under one CPU limit)")
        return
    print(
        f"separating problems: {len(separating)} of {len(manifest['problems'])} "
        f"(target ≥ 12: {'met' if len(separating) >= 12 else 'NOT met'})"
    )
    chosen = set(separating)
    per_cell = Counter((e.problem_id, e.checkpoint_id) for e in evals if e.problem_id in chosen)
    n = min(per_cell.values(), default=0)
    print(f"samples per α on each separating problem: at least {n} (target ≥ 16: {'met' if n >= 16 else 'NOT met'})")


def first_failing_tiers(store: Store, manifest: dict, evals: list[Evaluation]) -> None:
    """The failing held-in samples at every α, by the SFT program they are a variant of and the tier
    of their first failing test: R_3 pays a sample that first fails above tier 3, R_inf none."""
    points = {c.id for c in store.select(Checkpoint) if c.alpha is not None}
    styles = sample_styles(store, manifest["sweep_experiment"], points)
    held_in, tiers = set(manifest["held_in"]), {}
    for e in evals:
        if e.checkpoint_id in points and e.problem_id in held_in and e.first_failing_tier is not None:
            style = styles[e.checkpoint_id, e.problem_id, e.sample_idx]
            tiers.setdefault(style, Counter())[e.first_failing_tier] += 1
    top = max((t for c in tiers.values() for t in c), default=0)
    if not top:
        print("first failing tier of the failing held-in samples: none ran a failing test")
        return
    print(
        "first failing tier of the failing held-in samples, every α, by SFT style (R_3 scores a sample 0 iff it first "
        "fails at tier ≤ 3; R_inf scores every failing sample 0):"
    )
    print("  style       " + "".join(f"tier {t:<4}" for t in range(1, top + 1)) + "  tier ≤ 3 (both 0)   R_3 pays")
    for style in (s for s in STYLES if s in tiers):
        c, total = tiers[style], sum(tiers[style].values())
        low = sum(n for t, n in c.items() if t <= 3)
        print(
            f"  {style:<11} "
            + "".join(f"{c[t]:<9}" for t in range(1, top + 1))
            + f"  {low:>5} of {total:<5} ({low / total:5.1%})   {total - low:>5}"
        )


def program_tiers(manifest: dict, rejudge: bool) -> None:
    """Per problem: the first failing tier of its brute force and buggy-fast variants, and whether
    R_3 and R_inf tell each variant from the brute force (lab/separation.py)."""
    reports = manifest.get("problems") or {}
    if not reports:
        return
    source = "recorded by the build"
    if any("brute_first_fail_tier" not in r for r in reports.values()):
        if not rejudge:
            print(
                "first failing tier of each program: not recorded by this build (run with --rejudge to judge the "
                "builtin programs now, under its recorded limits)"
            )
            return
        reports, source = rejudged(manifest), "judged now under the build's recorded limits (not recorded by it)"
    print(
        f"first failing tier per problem, brute force / buggy-fast variants, and which reward tells each variant "
        f"from the brute force ({source}):"
    )
    told, separating = Counter(), set(manifest.get("separating") or [])
    for pid, r in sorted(reports.items()):
        by = {reward: told_apart(r, reward) for reward in ("R_3", "R_inf")}
        told.update({reward: sum(v) for reward, v in by.items()})
        told["variants"] += len(r["buggy_first_fail_tiers"])
        tiers = ", ".join("-" if t is None else str(t) for t in r["buggy_first_fail_tiers"])
        print(
            f"  {pid:<34} {r['brute_first_fail_tier'] or '-'} / {tiers:<10} R_3: "
            f"{' '.join('yes' if t else 'no' for t in by['R_3']):<12} R_inf: "
            f"{' '.join('yes' if t else 'no' for t in by['R_inf'])}"
            f"{'' if pid in separating else '   (not separating)'}"
        )
    print(
        f"  variants told from the brute force: R_3 {told['R_3']} of {told['variants']}, R_inf {told['R_inf']} of "
        f"{told['variants']}"
    )


def rejudged(manifest: dict) -> dict[str, dict]:
    """Build F and before did not record first failing tiers: the builtin programs judged now."""
    from backend.lab.problems import lab_problems
    from backend.lab.separation import separation

    limits = {pid: r["limit_s"] for pid, r in manifest["problems"].items()}
    built = lab_problems(LabRecipe.from_dict(manifest["recipe"]), progress=False)
    return {r.problem_id: r.as_dict() for r in separation(built, runs=1, limits=limits)}


def withheld_tests(store: Store, manifest: dict, evals: list[Evaluation]) -> None:
    """The fourth design's pre-registered tests (docs/lab-preregistration.md, build G)."""
    if not manifest.get("withheld"):
        print("withheld-set tests (fourth design): not tested, this build has no withheld set")
        return
    from backend.lab.report import preregistered_tests

    withheld = set(manifest["withheld"])
    per_cell = Counter((e.problem_id, e.checkpoint_id) for e in evals if e.problem_id in withheld)
    n = min(per_cell.values(), default=0)
    print(
        f"withheld set: {len(withheld)} problems, kept set {len(manifest['kept'])}; samples per α on each "
        f"withheld problem: at least {n} (target ≥ 16: {'met' if n >= 16 else 'NOT met'})"
    )
    print("pre-registered tests (needed effect +0.1; T1 on the withheld set, the kept set's parts in brackets):")
    for row in preregistered_tests(store.outcome_counts(manifest["sweep_experiment"]), manifest):
        print(
            f"  {row['test']} {row['set']}: {row['what']}: {row['status']}; {fmt(row['statistic'])} "
            f"[{fmt(row['ci_low'])}, {fmt(row['ci_high'])}]"
        )


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


if __name__ == "__main__":
    main()
