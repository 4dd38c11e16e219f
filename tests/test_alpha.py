"""α as one value (backend/alpha.py): its kind, its text and its label on a hand table, the labels
already stored unchanged, and no other module formatting the "α=…" label itself."""

import ast

import pytest

from backend.alpha import AlphaSwitch, alpha_kind, alpha_label, alpha_text
from backend.analysis.frame import point_kind
from backend.merge.grid import parse_alpha_grid
from backend.sweep.pipeline import Point
from tests.conftest import ROOT

CASES = [  # α, its label, its kind: by hand
    (-0.5, "α=-0.5", "extrapolated"),
    (0.0, "α=0", "endpoint"),
    (-0.0, "α=0", "endpoint"),  # not "α=-0"
    (0.25, "α=0.25", "interpolated"),
    (1, "α=1", "endpoint"),
    (1.5, "α=1.5", "extrapolated"),
    (2.0, "α=2", "extrapolated"),
    (0.1 + 0.2, "α=0.3", "interpolated"),  # float noise below :g's six digits is not shown
    (0.25 + 1e-12, "α=0.25", "interpolated"),
    (1e-9, "α=1e-09", "interpolated"),  # a small α is still an α, not the endpoint
    (-1e-9, "α=-1e-09", "extrapolated"),
    (1 + 1e-9, "α=1.000000001", "extrapolated"),  # ":g" would say "1", an endpoint it is not
    (1 - 1e-12, "α=0.999999999999", "interpolated"),
]


@pytest.mark.parametrize(("alpha", "label", "kind"), CASES)
def test_label_and_kind_by_hand(alpha, label, kind):
    assert alpha_label(alpha) == label
    assert alpha_label(alpha, spaced=True) == label.replace("=", " = ")
    assert alpha_text(alpha) == label.removeprefix("α=")
    assert alpha_kind(alpha) == kind == point_kind("merged", alpha)
    assert point_kind("trained", alpha) == "independent" == alpha_kind(None)


def test_every_grid_alpha_keeps_the_label_stored_before():
    """Rows already in users' databases were labelled f"α={a:g}": every α a grid can hold is labelled
    the same way now, so a sweep run again finds and joins its old rows by label."""
    grid = (
        parse_alpha_grid("-2:1:0.05")
        + parse_alpha_grid("1:3:0.05")
        + parse_alpha_grid("-1:2:0.125")
        + parse_alpha_grid("0.333,0.667,1e-3")
    )
    assert len(grid) > 100
    assert [alpha_label(a) for a in grid] == [f"α={a:g}" for a in grid]


def test_a_sweep_point_carries_its_alpha_kind_and_label():
    live = Point.merged("merged-x", "/low", 1.5, AlphaSwitch("/low", "/high", 1.5))
    assert (live.alpha, live.kind, live.label) == (1.5, "extrapolated", "α=1.5")
    low, high, alpha = live.alpha_switch  # what the executors unpack
    assert (low, high, alpha) == ("/low", "/high", 1.5) and live.alpha_switch[:2] == ("/low", "/high")
    folder = Point.merged("merged-y", "/cache/y", 0.0)
    assert (folder.kind, folder.label, folder.alpha_switch) == ("endpoint", "α=0", None)
    assert Point("ckpt-1", "/runs/r4", label="R_4").kind == "independent"


HOME = "backend/alpha.py"
# a list of α values in a page's caption ("α = -0.5, 0, 1"), not one point's label
ALLOWED = {"dashboard/controls.py"}


def label_formats(source: str) -> list[int]:
    """Lines of f-strings that write "α=" or "α = " (or "alpha=") right before a formatted value."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            for before, after in zip(node.values, node.values[1:], strict=False):
                text = before.value if isinstance(before, ast.Constant) else ""
                if isinstance(after, ast.FormattedValue) and text.rstrip().endswith(("α=", "α =", "alpha=")):
                    found.append(node.lineno)
    return found


def test_the_scan_finds_a_label_built_by_hand():
    source = 'a = f"α={x:g}"\nb = f"at α = {x}"\nc = f"α grid"\nd = "α=%{customdata[0]}"\ne = f"{alpha_label(x)}"\n'
    assert label_formats(source) == [1, 2]


def test_no_other_module_formats_the_alpha_label():
    paths = [p for d in ("backend", "dashboard", "bench", "scripts") for p in (ROOT / d).rglob("*.py")]
    offenders = {
        str(p.relative_to(ROOT)): lines
        for p in sorted([*paths, ROOT / "app.py"])
        if str(p.relative_to(ROOT)) not in {HOME, *ALLOWED} and (lines := label_formats(p.read_text()))
    }
    assert offenders == {}
