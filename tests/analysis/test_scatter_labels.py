"""Every point of the frontier scatter is labelled, and no label covers another label, a point or a
CI bar (issue #48). The geometry is this test's own, read from the figure's JSON: its size and
margins, its axis ranges, each annotation's font size and pixel offset, each trace's error bars.
A label's box is 0.62 em a character by 1.25 em, centred where the annotation puts it."""

import polars as pl
import pytest

from dashboard.scatter import failure_scatter

ALPHAS = [-0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5]


def sweep(corr: list[float], opt: list[float], half: list[float]) -> pl.DataFrame:
    """A 9-point α sweep and the SFT start, with 95% CIs of the given half-widths."""
    kinds = ["extrapolated"] * 2 + ["endpoint"] + ["interpolated"] * 3 + ["endpoint"] + ["extrapolated"] * 2
    rows = [dict(alpha=a, label=f"α={a:g}", point_kind=k, correctness_failure=c, optimization_failure=o,
                 correctness_failure_lo=c - h, correctness_failure_hi=c + h, optimization_failure_lo=max(0.0, o - h),
                 optimization_failure_hi=o + h, n_samples=480)
            for a, k, c, o, h in zip(ALPHAS, kinds, corr, opt, half, strict=True)]  # fmt: skip
    rows.append(dict(alpha=None, label="SFT", point_kind="independent", correctness_failure=0.455,
                     optimization_failure=0.162, correctness_failure_lo=0.41, correctness_failure_hi=0.5,
                     optimization_failure_lo=0.13, optimization_failure_hi=0.195, n_samples=60))  # fmt: skip
    return pl.DataFrame(rows)


SWEEPS = {
    # α = 0.5 and 0.75, and 1 and 1.25, a few pixels apart; CIs of ±3–4 points crossing each other
    "close pairs": sweep(
        [0.412, 0.405, 0.398, 0.371, 0.352, 0.347, 0.343, 0.351, 0.366],
        [0.214, 0.207, 0.196, 0.158, 0.121, 0.117, 0.113, 0.109, 0.118],
        [0.041, 0.038, 0.036, 0.035, 0.033, 0.032, 0.031, 0.034, 0.037],
    ),
    # the miniature lab's shape: correctness flat, optimization falling to almost nothing, wide CIs
    "lab-like": sweep(
        [0.871, 0.849, 0.849, 0.858, 0.884, 0.868, 0.820, 0.835, 0.844],
        [0.070, 0.074, 0.059, 0.048, 0.024, 0.015, 0.006, 0.004, 0.004],
        [0.05, 0.05, 0.04, 0.04, 0.04, 0.03, 0.03, 0.03, 0.03],
    ),
    # everything within two points on each axis: nine labels to fit around one cluster
    "one cluster": sweep(
        [0.30, 0.302, 0.305, 0.301, 0.299, 0.303, 0.306, 0.304, 0.300],
        [0.20, 0.203, 0.199, 0.205, 0.201, 0.198, 0.204, 0.202, 0.206],
        [0.02] * 9,
    ),
}


class Geometry:
    """Pixels of the figure as its JSON lays it out (y grows downwards)."""

    def __init__(self, fig: dict):
        layout = fig["layout"]
        m = layout["margin"]
        assert m["autoexpand"] is False  # else Plotly may grow a margin and move the plot area
        self.left, self.top = m["l"], m["t"]
        self.right, self.bottom = layout["width"] - m["r"], layout["height"] - m["b"]
        self.x0, self.x1 = layout["xaxis"]["range"]
        self.y0, self.y1 = layout["yaxis"]["range"]

    def px(self, x: float, y: float) -> tuple[float, float]:
        return (self.left + (x - self.x0) / (self.x1 - self.x0) * (self.right - self.left),
                self.top + (self.y1 - y) / (self.y1 - self.y0) * (self.bottom - self.top))  # fmt: skip


def label_boxes(fig: dict, g: Geometry) -> dict[str, tuple]:
    out = {}
    for a in fig["layout"]["annotations"]:
        assert (a["xref"], a["yref"], a.get("axref", "pixel"), a.get("ayref", "pixel")) == ("x", "y", "pixel", "pixel")
        assert (a["xanchor"], a["yanchor"]) == ("center", "middle")  # the offset is the box's centre
        size = a["font"]["size"]
        w, h = 0.62 * size * len(a["text"]), 1.25 * size
        cx, cy = g.px(a["x"], a["y"])
        cx, cy = cx + a["ax"], cy + a["ay"]
        out[a["text"]] = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
    return out


def obstacles(fig: dict, g: Geometry) -> list[tuple]:
    """Each point's marker (half its size either side) and each CI bar with its caps."""
    out = []
    for t in fig["data"]:
        for i, (x, y) in enumerate(zip(t["x"], t["y"], strict=True)):
            cx, cy = g.px(x, y)
            if "markers" in t.get("mode", "") and t["marker"].get("opacity", 1) > 0:
                half = t["marker"]["size"] / 2
                out.append((cx - half, cy - half, cx + half, cy + half))
            if (ex := t.get("error_x")) and (ey := t.get("error_y")):
                (left, low), (right, high) = g.px(x - ex["arrayminus"][i], y - ey["arrayminus"][i]), g.px(
                    x + ex["array"][i], y + ey["array"][i])  # fmt: skip
                out += [(left, cy - ex["width"], right, cy + ex["width"]),
                        (cx - ey["width"], high, cx + ey["width"], low)]  # fmt: skip
    return out


def overlaps(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def collisions(fig: dict) -> list[str]:
    g = Geometry(fig)
    boxes, blocked = label_boxes(fig, g), obstacles(fig, g)
    out = [f"{a} × {b}" for a in boxes for b in boxes if a < b and overlaps(boxes[a], boxes[b])]
    out += [f"{a} × a point or CI bar" for a, box in boxes.items() if any(overlaps(box, o) for o in blocked)]
    out += [f"{a} off the plot" for a, (x0, y0, x1, y1) in boxes.items()
            if x0 < g.left or x1 > g.right or y0 < g.top or y1 > g.bottom]  # fmt: skip
    return out


@pytest.mark.parametrize("name", SWEEPS)
def test_every_point_labelled_and_no_label_collides(name):
    fig = failure_scatter(SWEEPS[name], experiment="test sweep").to_dict()
    texts = sorted(a["text"] for a in fig["layout"]["annotations"])
    assert texts == sorted([f"α={a:g}" for a in ALPHAS] + ["SFT"])  # all nine α and the SFT start
    for a in fig["layout"]["annotations"]:  # each at its own point
        row = SWEEPS[name].filter(pl.col("label") == a["text"])
        assert (a["x"], a["y"]) == (row["correctness_failure"][0], row["optimization_failure"][0])
    assert collisions(fig) == []


def test_the_check_sees_a_label_on_its_point():
    """The geometry above can fail: a label moved onto its point collides with the point and its bars."""
    fig = failure_scatter(SWEEPS["close pairs"]).to_dict()
    fig["layout"]["annotations"][0] |= {"ax": 0, "ay": 0}
    assert f"{fig['layout']['annotations'][0]['text']} × a point or CI bar" in collisions(fig)
