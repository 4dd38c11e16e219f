"""α as one value (backend/alpha.py): its kind, its text, its label and its folder on a hand table,
the labels already stored unchanged, the grid's refusals, and no other module formatting the "α=…"
label, or α with `:g`, itself."""

import ast
import math

import pytest

from backend.alpha import AlphaSwitch, alpha_folder, alpha_grid, alpha_kind, alpha_label, alpha_text, parse_alpha_grid
from backend.analysis.frame import point_kind
from backend.errors import UserError
from backend.sweep.executors import Point
from tests.scan import offenders

CASES = [  # α, its label, its kind: by hand
    (-0.5, "α=-0.5", "extrapolated"),
    (0.0, "α=0", "endpoint"),
    (-0.0, "α=0", "endpoint"),  # not "α=-0"
    (0.25, "α=0.25", "interpolated"),
    (1, "α=1", "endpoint"),
    (1.5, "α=1.5", "extrapolated"),
    (2.0, "α=2", "extrapolated"),
    (0.3, "α=0.3", "interpolated"),
    (0.1 + 0.2, "α=0.30000000000000004", "interpolated"),  # another α than 0.3: written apart from it
    (0.25 + 1e-12, "α=0.250000000001", "interpolated"),  # ":g" would say 0.25, another α
    (0.1234567, "α=0.1234567", "interpolated"),  # ":g" would say 0.123457
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
    assert alpha_folder(alpha) == "alpha_" + label.removeprefix("α=")
    assert float(alpha_text(alpha)) == alpha  # the text reads back as the same α
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


GRIDS = [  # text, its α: by hand
    ("-1:2:0.5", [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0]),
    ("0:1:0.1", [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]),  # decimal steps: 0.3, not 0.1 + 0.2
    ("-1:0:0.5, 1.25, 0", [-1.0, -0.5, 0.0, 1.25]),
    ("1, 1.0, -0", [0.0, 1.0]),  # one α written three ways
    ("1,1.000000001", [1.0, 1.000000001]),
    ("0:1e-3:5e-4", [0.0, 0.0005, 0.001]),
    ("0:1e-17:1e-18", [i * 1e-18 for i in range(11)][:1] + [float(f"{i}e-18") for i in range(1, 11)]),  # tiny, distinct
    ("0.1234567,0.1234568", [0.1234567, 0.1234568]),  # seven digits: two α, two labels
]


@pytest.mark.parametrize(("text", "alphas"), GRIDS)
def test_grid_by_hand(text, alphas):
    assert parse_alpha_grid(text) == alphas
    assert len({alpha_label(a) for a in alphas}) == len({alpha_folder(a) for a in alphas}) == len(alphas)


REFUSED = [  # text, the start of its one line: by hand
    ("1,1.00000000000000001", "α 1.00000000000000001 cannot be told apart from α 1 "),
    ("0:100:1", "α grid '0:100:1' has more than 64 points"),
    ("1:1.00000000000000002:0.00000000000000001", "α 1.00000000000000001 cannot be told apart from α 1 "),
    ("0.30000000000000000001", "α 0.30000000000000000001 cannot be told apart from α 0.3 "),
    ("2:-1:0.5", "α range '2:-1:0.5' is reversed; write -1:2:0.5"),
    ("0:1:0", "α range '0:1:0' needs a positive step"),
    ("1e999", "α values must be finite"),
    ("nan", "α values must be finite"),
    ("x", "α 'x' is not a number"),
    (".:1:0.5", "bad α range '.:1:0.5'"),
    ("", "empty α grid"),
]


@pytest.mark.parametrize(("text", "line"), REFUSED)
def test_grid_refusals_by_hand(text, line):
    with pytest.raises(UserError) as err:
        parse_alpha_grid(text)
    assert str(err.value).startswith(line) and "\n" not in str(err.value)


def test_neighbouring_floats_get_their_own_text_label_and_folder():
    """Distinct α are never written alike: each float and its next neighbours either side."""
    alphas = [
        a
        for x in (0.5, 1.0, 1 / 3, -2.75, 1e-9, 123456.789)
        for a in (math.nextafter(x, -math.inf), x, math.nextafter(x, math.inf))
    ]
    assert len({alpha_folder(a) for a in alphas}) == len({alpha_label(a) for a in alphas}) == len(set(alphas)) == 18
    assert all(float(alpha_text(a)) == a for a in alphas)


def test_a_spec_reads_text_texts_and_numbers_alike():
    assert alpha_grid("1.5,-0.5") == alpha_grid(["1.5", "-0.5"]) == alpha_grid([1.5, -0.5, 1.5]) == [-0.5, 1.5]
    with pytest.raises(UserError, match="finite"):
        alpha_grid([0.0, math.inf])


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


def label_formats(tree: ast.Module, path: str = "") -> list[int]:
    """Lines of f-strings that write "α=" or "α = " (or "alpha=") right before a formatted value."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            for before, after in zip(node.values, node.values[1:], strict=False):
                text = before.value if isinstance(before, ast.Constant) else ""
                if isinstance(after, ast.FormattedValue) and text.rstrip().endswith(("α=", "α =", "alpha=")):
                    found.append(node.lineno)
    return found


def test_the_scan_finds_a_label_built_by_hand():
    source = 'a = f"α={x:g}"\nb = f"at α = {x}"\nc = f"α grid"\nd = "α=%{customdata[0]}"\ne = f"{alpha_label(x)}"\n'
    assert label_formats(ast.parse(source)) == [1, 2]


def test_no_other_module_formats_the_alpha_label():
    assert offenders(label_formats, skip={HOME, *ALLOWED}) == {}


def alpha_g_formats(tree: ast.Module, path: str = "") -> list[int]:
    """Lines of f-strings that format α with a `g` spec: the value's text names α (alpha, α), or
    it is a loop variable over something that does."""
    over_alphas = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, (ast.For, ast.comprehension))
        and isinstance(target := node.target, ast.Name)
        and _names_alpha(ast.unparse(node.iter))
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            spec = "".join(v.value for v in node.format_spec.values if isinstance(v, ast.Constant))
            value = ast.unparse(node.value)
            if spec.endswith("g") and (_names_alpha(value) or value in over_alphas):
                found.append(node.value.lineno)
    return found


def _names_alpha(text: str) -> bool:
    return "alpha" in text.lower() or "α" in text


def test_the_scan_finds_alpha_formatted_with_g():
    source = (
        'a = f"{alpha:g}"\nb = f"{o.alphas[i]:.3g}"\nc = [f"{x:g}" for x in spec.alphas]\n'
        'd = f"{t:g} s"\ne = f"{alpha_text(x)}"\nfor y in alphas:\n    f = f"{y:g}"\n'
    )
    assert alpha_g_formats(ast.parse(source)) == [1, 2, 3, 7]


def test_no_other_module_formats_alpha_with_g():
    assert offenders(alpha_g_formats, skip={HOME}) == {}
