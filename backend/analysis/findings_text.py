"""The findings in words: statuses as a reader says them, numbers as a paper prints them
("+0.300 [+0.231, +0.367]"), for the terminal, the lab report and the Overview."""

from __future__ import annotations

import re

STATUS_WORDS = {
    "shows": "shows",
    "does_not_show": "does not show",
    "underpowered": "underpowered",
    "not_tested": "not tested",
}
FINDING_WORDS = {
    "frontier": "F1 frontier",
    "extrapolation": "F2 extrapolation",
    "churn": "F3 churn",
    "ensemble": "F4 ensemble",
}


def findings_table(rows: list[dict]) -> str:
    """Markdown of Finding.to_dict() rows: one line per finding, then its parts."""
    lines = ["| finding | status | statistic | CI (its level) | criterion |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| **{r['finding']}** | **{STATUS_WORDS[r['status']]}** | {_num(r['statistic'])} | "
            f"{ci_with_level(_source(r))} | {_criterion(r)} |"
        )
        if len(r["parts"]) > 1:
            lines += [
                f"| ↳ {p['name']} | {STATUS_WORDS[p['status']]} | {_num(p['statistic'])} | {ci_with_level(p)} "
                f"| {_criterion(p)} |"
                for p in r["parts"]
            ]
    return "\n".join(lines) + "".join(f"\n\n{line}" for line in findings_notes(rows))


def overview_rows(rows: list[dict]) -> list[dict]:
    """One row per finding, in words: its status, a sentence saying what decided it (the part it
    took its status from: its number, the CI at the level its criterion uses, and whether the
    criterion is met), that number, that CI, and the criterion in full. The CI and a threshold from
    a noise model (F3's no-churn quantile) never share a cell: the sentence names the threshold."""
    out = []
    for r in rows:
        lead = next((p for p in r["parts"] if p["status"] == r["status"]), r["parts"][0] if r["parts"] else None)
        out.append(
            {
                "finding": FINDING_WORDS.get(r["finding"], r["finding"]),
                "status": STATUS_WORDS[r["status"]],
                "in words": status_sentence(r, lead),
                "estimate": _num(r["statistic"]),
                "CI": ci_with_level(lead or r),
                "criterion": _criterion(r),
            }
        )
    return out


VERDICTS = {
    "shows": "the criterion is met",
    "underpowered": "the criterion is not met, but the CI still reaches the effect it needs (underpowered)",
    "does_not_show": "the criterion is not met, and the CI rules out the effect it needs",
}


def status_sentence(r: dict, lead: dict | None = None) -> str:
    """ "corr rises: -0.044 (90 % CI -0.115 to +0.017): the criterion is not met, and …"."""
    if r["status"] == "not_tested":
        return f"Not tested: {r['reason']}."
    part = lead or r
    name = part.get("name") or FINDING_WORDS.get(r["finding"], r["finding"])
    ci = "" if part["ci_low"] is None else f" ({ci_with_level(part, ' to ')})"
    low_power = power_sentence(r)
    return f"{name}: {_num(part['statistic'])}{ci}: {VERDICTS[r['status']]}." + (f" {low_power}" if low_power else "")


def excess_sentence(e: dict) -> str:
    """The churn excess (churn_excess.ChurnExcess.to_dict(), the Churn page's) in the words the
    Overview's F3 uses: the same estimate, CI, level and status."""
    if e["status"] == "not_tested":
        return f"not tested: {e['reason']}."
    level = f"{e['level'] * 100:g} %"
    return (
        f"{_num(e['estimate'])} problems beyond the best single, {e['against']} "
        f"({level} CI {_signed(e['lo'])} to {_signed(e['hi'])}): {VERDICTS[e['status']]}."
    )


def power_sentence(r: dict) -> str:
    """F4's power in words where it is below one half (findings_axis.ensemble_power), else ""."""
    p = r.get("power")
    if not p or p["power"] is None or p["power"] >= 0.5:
        return ""
    return (
        f"At this size ({p['problems']} problems, {p['n']} samples per cell) F4 has {p['power']:.0%} power to show "
        f"a gain of +{p['effect']:g} in pass@{p['k']}: about {p['n_for_80']} samples per cell would give 80 % (if "
        "its standard error shrinks as 1/√n)."
    )


_LEVEL = re.compile(r"(\d+(?:\.\d+)?) ?% CI")


def _level(r: dict) -> str:
    """The CI level the criterion states ("90 %"), or "" where it states none."""
    found = _LEVEL.search(r.get("criterion") or "")
    return f"{found.group(1)} %" if found else ""


def _source(r: dict) -> dict:
    """The part a finding's statistic and CI come from (its criterion states their level)."""
    same = (p for p in r["parts"] if (p["statistic"], p["ci_low"]) == (r["statistic"], r["ci_low"]))
    return next(same, r)


def ci_with_level(r: dict, between: str = "") -> str:
    """ "90 % CI [-0.115, +0.017]" (or, with `between`, "90 % CI -0.115 to +0.017"): the interval
    with the level it was computed at."""
    if r["ci_low"] is None:
        return "–"
    interval = f"{_signed(r['ci_low'])}{between}{_signed(r['ci_high'])}" if between else _ci_text(r)
    return f"{_level(r)} CI {interval}".strip()


def preregistered_rows(rows: list[dict]) -> list[dict]:
    """The lab's pre-registered tests (backend/lab/report.py) in words, as the Overview shows them."""
    return [
        {
            "test": r["test"],
            "set": r["set"],
            "what": r["what"],
            "status": STATUS_WORDS.get(r["status"], r["status"]),
            "estimate [95 % CI]": estimate_text(r),
        }
        for r in rows
    ]


def estimate_text(r: dict) -> str:
    """ "+0.300 [+0.231, +0.367]", or "–" for a statistic never computed."""
    return _num(r["statistic"]) if r["ci_low"] is None else f"{_num(r['statistic'])} {_ci_text(r)}"


def _criterion(r: dict) -> str:
    return (
        f"not tested: {r['reason']}. The criterion: {r['criterion']}" if r["status"] == "not_tested" else r["criterion"]
    )


def _num(v: float | None) -> str:
    return "–" if v is None else f"{v:+.3f}"


def _signed(v: float) -> str:
    return f"{v:+.3f}"


def _ci_text(r: dict) -> str:
    return "–" if r["ci_low"] is None else f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"


def findings_notes(rows: list[dict]) -> list[str]:
    """What every findings output says beside its table: how tiny-input time-outs were counted,
    and each finding's problems left out of its statistics (count and reasons)."""
    notes = [f"Time-outs on tiny inputs: {rows[0]['tiny_inputs']}."] if rows and rows[0].get("tiny_inputs") else []
    return notes + excluded_lines(rows) + [line for line in map(power_sentence, rows) if line]


def excluded_lines(rows: list[dict]) -> list[str]:
    """One line per finding that left problems out of its statistics, with the count and the reasons."""
    lines = []
    for r in rows:
        if excluded := r.get("excluded_problems"):
            reasons = list(dict.fromkeys(e["reason"] for e in excluded))
            reasons = "; ".join(reasons[:3]) + ("; …" if len(reasons) > 3 else "")
            lines.append(
                f"{FINDING_WORDS.get(r['finding'], r['finding'])}: {len(excluded)} problem"
                f"{'s' * (len(excluded) > 1)} left out ({reasons}); `analyze findings --json` lists them "
                "as `excluded_problems`."
            )
    return lines


def tiny_input_rule(opt_min_tier: int | None) -> str:
    """How a time or memory failure on a tiny input was counted, in words (docs/findings.md,
    "Time-outs on tiny inputs"): the default follows the method's classes, the first failing test's
    verdict decides."""
    if opt_min_tier is None:
        return (
            "every time or memory failure counts as an optimization failure, whatever the size of its first "
            "failing input (the method's rule; `--opt-min-tier T` counts those below tier T as correctness failures)"
        )
    return (
        f"a time or memory failure whose first failing input is below tier {opt_min_tier} (shorter than "
        f"{10 ** (opt_min_tier - 1)} characters) counts as a correctness failure (--opt-min-tier {opt_min_tier})"
    )
