"""The paper's tests that had no statistic: recovery of independent checkpoints, format failures
by cause with completion lengths, the trend along α with simultaneous bands, and time-outs on tiny
inputs counted as correctness failures. Independent references: hand geometry, direct counts over
the stored rows, the simulation's own parameters."""

import json

import numpy as np
import pytest

from backend.analysis.frame import Outcomes, point_kind
from backend.analysis.frontier import format_causes
from backend.analysis.recovery import recovery
from backend.analysis.trend import trend
from backend.outcomes import OUTCOME_CLASSES
from backend.records import Checkpoint, Evaluation, Experiment, Problem, Sample
from backend.store_queries import SampleFilter


def outcomes(counts: dict[str, tuple[int, int, int]], alphas: dict[str, float | None], problems: int = 20) -> Outcomes:
    """counts[checkpoint] = (correct, opt, corr) of 10 samples, the same on every problem."""
    names = list(counts)
    table = np.array([counts[c] for c in names])  # checkpoints × 3
    per = {cls: np.tile(col, (problems, 1)) for cls, col in zip(OUTCOME_CLASSES[:3], table.T, strict=True)}
    per["format_failure"] = 10 - sum(per.values())
    kinds = [point_kind("merged" if alphas[c] is not None else "trained", alphas[c]) for c in names]
    return Outcomes([f"p{i}" for i in range(problems)], [""] * problems, [None] * problems, names, names,
                    [alphas[c] for c in names], kinds, np.full((problems, len(names)), 10), per)  # fmt: skip


def test_recovery_is_zero_on_the_curve_and_the_hand_distance_off_it():
    """The curve: (opt, corr) = (0.8, 0.1) at α = 0, (0.5, 0.3) at 0.5, (0.2, 0.5) at 1, one line.
    (0.8, 0.5) lies off it by |(0, 0.4) × (−0.3, 0.2)| / |(−0.3, 0.2)| = 0.12 / √0.13."""
    counts = {"a0": (1, 8, 1), "a0.5": (2, 5, 3), "a1": (3, 2, 5), "on": (2, 5, 3), "off": (0, 8, 5)}
    alphas = {"a0": 0.0, "a0.5": 0.5, "a1": 1.0, "on": None, "off": None}
    rows = {r["checkpoint_id"]: r for r in recovery(outcomes(counts, alphas), replicates=200)}
    assert rows["on"]["distance"] == pytest.approx(0.0, abs=1e-12) and rows["on"]["nearest_alpha"] == pytest.approx(0.5)
    assert rows["on"]["distance_hi"] == pytest.approx(0.0, abs=1e-12)
    assert rows["off"]["distance"] == pytest.approx(0.12 / np.sqrt(0.13))
    assert rows["off"]["distance_lo"] <= rows["off"]["distance"] <= rows["off"]["distance_hi"]
    # the test: on the curve, a CI of [0, 0] inside the 0.141 margin (10 points in each share); off it
    # by 0.33, beyond every one of the 200 distances drawn from the nearest curve point's rates (10
    # samples on each of 20 problems put a share's sd near 0.1/√20 ≈ 0.02, the null's distances well
    # under 0.2)
    assert (rows["on"]["status"], rows["on"]["distance_lo"], rows["on"]["margin"]) == ("does_not_show", 0.0, 0.141)
    assert rows["off"]["status"] == "shows" and rows["off"]["p_value"] == pytest.approx(1 / 201)
    # the nearest point: a + t·(b − a), t = (0, 0.4)·(−0.3, 0.2) / 0.13 of the way from α = 0 to 0.5
    assert rows["off"]["nearest_alpha"] == pytest.approx(0.5 * 0.08 / 0.13)
    t = 0.08 / 0.13
    assert (rows["off"]["nearest_optimization_share"], rows["off"]["nearest_correctness_share"]) == pytest.approx(
        (0.8 - 0.3 * t, 0.1 + 0.2 * t)
    )


def test_trend_slope_and_simultaneous_bands_against_the_simulated_truth():
    """Optimization share 0.6 − 0.2·α on every problem over α ∈ [−0.5, 1.5], 34 problems, n = 16:
    the band must hold the true line at every α at once in at least 90 % of 100 runs (95 % nominal),
    and be wider than pointwise 95 % intervals (critical value above 1.96)."""
    alphas = np.arange(-0.5, 1.51, 0.25)
    truth = 0.6 - 0.2 * alphas
    covered, slopes = 0, []
    for run in range(100):
        rng = np.random.default_rng(run)
        opt = rng.binomial(16, np.tile(truth, (34, 1)))
        corr = rng.binomial(16 - opt, 0.5)
        names = [f"a{a:g}" for a in alphas]
        counts = {"optimization_failure": opt, "correctness_failure": corr, "correct": 16 - opt - corr,
                  "format_failure": np.zeros_like(opt)}  # fmt: skip
        o = Outcomes([f"p{i}" for i in range(34)], [""] * 34, [None] * 34, names, names, list(alphas),
                     [point_kind("merged", a) for a in alphas], np.full(opt.shape, 16), counts)  # fmt: skip
        result = trend(o, replicates=400, seed=run)
        band = [b for b in result["bands"] if b["class"] == "optimization_failure"]
        covered += all(b["band_lo"] <= t <= b["band_hi"] for b, t in zip(band, truth, strict=True))
        slopes.append(result["slopes"][0])
        assert band[0]["critical"] > 1.96
    assert covered >= 90, covered
    assert np.mean([s["slope_lo"] <= -0.2 <= s["slope_hi"] for s in slopes]) >= 0.9
    assert np.mean([s["slope"] for s in slopes]) == pytest.approx(-0.2, abs=0.01)


@pytest.fixture
def judged(store):
    """One experiment of 2 checkpoints × 3 problems × 6 samples with every kind of format failure,
    time-outs at tiers 2 and 5, and completion lengths."""
    rng = np.random.default_rng(4)
    store.put([Experiment(id="exp-f", kind="sweep", name="causes")])
    store.put(
        [Checkpoint(id=c, path=f"/x/{c}", kind="merged", alpha=a, label=c) for c, a in (("c0", 0.0), ("c1", 1.0))]
    )
    store.put([Problem(id=f"t/p{i}", bench="t", title=f"P{i}", statement="-") for i in range(3)])
    kinds = [("format_failure", "FORMAT", "stop", None), ("format_failure", "FORMAT", "length", None),
             ("format_failure", "CE", "stop", None), ("format_failure", "CE", "length", None),
             ("optimization_failure", "TLE", "stop", 2), ("optimization_failure", "MLE", "stop", 5),
             ("correctness_failure", "WA", "stop", 1), ("correct", "AC", "stop", None)]  # fmt: skip
    samples, evals = [], []
    for c in ("c0", "c1"):
        for p in range(3):
            for i in range(6):
                outcome, verdict, finish, tier = kinds[int(rng.integers(len(kinds)))]
                samples.append(Sample(experiment_id="exp-f", checkpoint_id=c, problem_id=f"t/p{p}", sample_idx=i,
                                      setting="reasoning", completion="x", finish_reason=finish,
                                      completion_tokens=int(rng.integers(10, 500))))  # fmt: skip
                evals.append(Evaluation(experiment_id="exp-f", checkpoint_id=c, problem_id=f"t/p{p}", sample_idx=i,
                                        outcome=outcome, verdict=verdict, first_failing_tier=tier))  # fmt: skip
    store.put(samples)
    store.put(evals)
    return samples, evals


def test_format_causes_and_lengths_match_direct_counts(store, judged, db_path, capsys):
    samples, evals = judged
    fmt = {(e.checkpoint_id, e.problem_id, e.sample_idx): e for e in evals}
    table = {r["checkpoint_id"]: r for r in format_causes(store.format_causes("exp-f"), "per_sample").to_dicts()}
    for c in ("c0", "c1"):
        mine = [s for s in samples if s.checkpoint_id == c]
        failed = [s for s in mine if fmt[(c, s.problem_id, s.sample_idx)].outcome == "format_failure"]
        cut = [s for s in failed if s.finish_reason == "length"]
        ce = [s for s in failed if s.finish_reason != "length" and fmt[(c, s.problem_id, s.sample_idx)].verdict == "CE"]
        assert table[c]["format_truncated"] == pytest.approx(len(cut) / len(mine))
        assert table[c]["format_compile_error"] == pytest.approx(len(ce) / len(mine))
        assert table[c]["format_no_code"] == pytest.approx((len(failed) - len(cut) - len(ce)) / len(mine))
        assert table[c]["completion_tokens_mean"] == pytest.approx(np.mean([s.completion_tokens for s in mine]))
    from backend.cli.analyze import analyze_command

    analyze_command("frontier", experiment="exp-f", as_json=True, db=db_path, averaging="per_sample")
    rows = {r["checkpoint_id"]: r for r in json.loads(capsys.readouterr().out)}
    for c in ("c0", "c1"):
        causes = sum(rows[c][f"format_{k}"] for k in ("truncated", "compile_error", "no_code"))
        assert causes == pytest.approx(rows[c]["format_failure"]) and rows[c]["opt_min_tier"] is None


def test_opt_min_tier_counts_tiny_input_time_outs_as_correctness_failures(store, judged):
    _, evals = judged
    for tier, moved in ((None, set()), (3, {2}), (6, {2, 5})):
        counts = store.outcome_counts("exp-f", SampleFilter(opt_min_tier=tier))
        for row in counts.to_dicts():
            mine = [e for e in evals if (e.checkpoint_id, e.problem_id) == (row["checkpoint_id"], row["problem_id"])]
            opt = [e for e in mine if e.outcome == "optimization_failure"]
            tiny = sum(e.first_failing_tier in moved for e in opt)
            assert row["optimization_failure"] == len(opt) - tiny
            assert row["correctness_failure"] == sum(e.outcome == "correctness_failure" for e in mine) + tiny


def share(evals, checkpoint: str, cls: str, moved: set[int]) -> float:
    """A class's share of a checkpoint's samples, per problem then averaged over the 3 problems, with
    the time-outs first failing at a tier in `moved` counted as correctness failures."""

    def counted(e) -> bool:
        tiny = e.outcome == "optimization_failure" and e.first_failing_tier in moved
        return ("correctness_failure" if tiny else e.outcome) == cls

    mine = [e for e in evals if e.checkpoint_id == checkpoint]
    return np.mean([np.mean([counted(e) for e in mine if e.problem_id == f"t/p{p}"]) for p in range(3)])


def test_opt_min_tier_reaches_the_findings(store, judged, db_path, capsys):
    """`analyze findings --opt-min-tier T`: F1's two share differences, counted directly from the
    stored evaluations with the time-outs below tier T moved to correctness failures."""
    from backend.cli.analyze import analyze_command

    _, evals = judged
    for tier, moved in ((None, set()), (3, {2}), (6, {2, 5})):
        analyze_command("findings", experiment="exp-f", as_json=True, db=db_path, opt_min_tier=tier)
        falls, rises, _ = json.loads(capsys.readouterr().out)[0]["parts"]
        opt = {c: share(evals, c, "optimization_failure", moved) for c in ("c0", "c1")}
        corr = {c: share(evals, c, "correctness_failure", moved) for c in ("c0", "c1")}
        assert falls["statistic"] == pytest.approx(opt["c0"] - opt["c1"])
        assert rises["statistic"] == pytest.approx(corr["c1"] - corr["c0"])


def test_cli_recovery_json_rows_carry_the_test(store, db_path):
    """`analyze recovery --json` through the store: a checkpoint with α = 0.5's counts is on the curve
    (does_not_show, a CI from 0), one with twice the failures of every kind is off it (shows)."""
    from tests.analysis.conftest import fill_experiment
    from tests.conftest import run_cli

    mix = {"a0": (2, 6, 2), "a0.5": (4, 4, 2), "a1": (6, 1, 3), "on": (4, 4, 2), "off": (0, 8, 2)}
    alphas = {"a0": 0.0, "a0.5": 0.5, "a1": 1.0, "on": None, "off": None}
    outs = {(c, f"p{p:02d}"): ["correct"] * k + ["optimization_failure"] * o + ["correctness_failure"] * r
            for c, (k, o, r) in mix.items() for p in range(20)}  # fmt: skip
    fill_experiment(store, outs, alphas)
    out = run_cli("analyze", "recovery", "--experiment", "exp-a", "--json", "--db", str(db_path))
    assert out.returncode == 0, out.stderr
    rows = {r["checkpoint_id"]: r for r in json.loads(out.stdout)}
    assert rows["on"]["distance"] == pytest.approx(0.0, abs=1e-12) and rows["on"]["status"] == "does_not_show"
    assert rows["on"]["distance_lo"] == 0.0 and rows["on"]["margin"] == 0.141
    # off: (opt, corr) = (0.8, 0.2) against the segment (0.6, 0.2)–(0.4, 0.2) … its nearest point (0.6, 0.2)
    assert rows["off"]["distance"] == pytest.approx(0.2) and rows["off"]["status"] == "shows"
    assert rows["off"]["p_value"] < 0.01 and rows["off"]["distance_lo"] > 0.1
