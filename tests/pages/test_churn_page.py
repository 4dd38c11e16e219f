"""The Churn page in Chromium: each churn count beside what sampling noise alone gives (issue #56),
and the union's excess over the best single as F3 says it on the Overview (one estimator)."""

import pytest

from backend.analysis.churn import churn_stats
from backend.analysis.frame import to_outcomes
from tests.pages.browser import shoot, wait_plots

pytestmark = pytest.mark.browser


def test_churn_page_shows_observed_beside_expected_flips_and_f3s_excess(server, populated, page):
    from backend.analysis.findings import FindingsSpec, check_churn

    o = to_outcomes(populated.outcome_counts("exp-dash"))
    stats, f3 = churn_stats(o), check_churn(o, FindingsSpec())
    excess = stats["union_excess"]
    page.goto(f"{server}/churn?exp=exp-dash")
    wait_plots(page, 1)
    main = page.locator("[data-testid='stMain']")
    main.get_by_text("Churn beyond noise (F3).").wait_for(timeout=60000)
    text = main.inner_text()
    assert (
        f"{stats['total_flips']} flips between neighbouring α, where {stats['total_flips_expected']:.1f} are expected "
        "from sampling noise alone" in text
    ), text
    # the Overview's F3, to the printed digit: estimate, CI with its level, status in words
    assert f"{f3.statistic:+.3f} problems beyond the best single, {excess['against']} (95 % CI " in text
    assert f"{f3.ci_low:+.3f} to {f3.ci_high:+.3f})" in text
    assert {"shows": "the criterion is met", "underpowered": "(underpowered)",
            "does_not_show": "rules out the effect it needs"}[f3.status] in text  # fmt: skip
    # the per-pair table: observed and expected side by side, one row per α pair
    table = main.locator("[data-testid='stDataFrame']").last
    table.locator("[role='columnheader']").filter(has_text="gained, expected from noise").wait_for(
        state="attached", timeout=30000
    )
    table.locator("[role='gridcell']").last.wait_for(state="attached", timeout=30000)
    cells = table.locator("[role='gridcell']").all_inner_texts()
    assert len(cells) == 6 * len(stats["flips"]), cells  # from, to, gained, expected, lost, expected
    for row, flip in zip(range(0, len(cells), 6), stats["flips"], strict=True):
        assert cells[row : row + 2] == [flip["from"], flip["to"]]
        assert int(cells[row + 2]) == flip["gained"] and int(cells[row + 4]) == flip["lost"]
        assert float(cells[row + 3]) == pytest.approx(flip["expected_gained"], abs=1e-3)
        assert float(cells[row + 5]) == pytest.approx(flip["expected_lost"], abs=1e-3)
    shoot(page, "churn_noise.png", full_page=True)
