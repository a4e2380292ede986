"""Inline SVG charts for the static dashboard: no JavaScript, no external files.

Every chart is a self-contained `<svg>` string with a `<title>` and `<desc>`
(read by screen readers and shown as a tooltip), a viewBox so it scales with
the page, and colours from CSS classes defined in the dashboard's stylesheet
(so light and dark themes both work). Marks carry `<title>` tooltips with
their exact numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

FONT = 12


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def pct(value: float | None, digits: int = 1) -> str:
    """0.1234 -> '12.3%'; None -> 'n/a'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value * 100:.{digits}f}%"


def _svg(width: int, height: int, title: str, desc: str, body: str, css: str = "chart") -> str:
    return (
        f'<svg class="{css}" viewBox="0 0 {width} {height}" role="img" '
        f'preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{_e(title)}</title><desc>{_e(desc)}</desc>{body}</svg>"
    )


def _axis_ticks(x0: float, x1: float, top: float, bottom: float, maximum: float) -> str:
    """Vertical grid lines and percentage labels at 0, 25, 50, 75, 100% of `maximum`."""
    parts = []
    for step in range(5):
        share = step / 4
        x = x0 + (x1 - x0) * share
        parts.append(
            f'<line class="grid" x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}"/>'
            f'<text class="tick" x="{x:.1f}" y="{bottom + 14:.1f}" text-anchor="middle">'
            f"{pct(maximum * share, 0)}</text>"
        )
    return "".join(parts)


def _nice_max(values: Sequence[float | None], floor: float = 0.1) -> float:
    finite = [v for v in values if v is not None and not math.isnan(v)]
    top = max(finite, default=0.0)
    if top >= 0.5:
        return 1.0
    for candidate in (0.02, 0.05, 0.1, 0.2, 0.25, 0.4, 0.5):
        if top <= candidate and candidate >= floor:
            return candidate
    return 1.0


@dataclass(frozen=True)
class Series:
    key: str
    label: str
    css: str  # colour class: fill for bars, stroke for dots


@dataclass(frozen=True)
class Bar:
    value: float | None
    numerator: float | None = None
    denominator: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None


def grouped_bars(
    categories: Sequence[str],
    series: Sequence[Series],
    values: dict[tuple[str, str], Bar],
    title: str,
    desc: str,
    maximum: float | None = None,
    label_width: int = 130,
) -> str:
    """Horizontal grouped bars: one group per category, one bar per series.

    Bars end in a value label; a thin whisker shows the 95% interval when
    given; the tooltip gives numerator / denominator.
    """
    bar_h, gap, group_gap = 13, 3, 16
    width = 560
    x0, x1 = label_width, width - 52
    group_h = len(series) * (bar_h + gap) - gap
    legend, legend_y = _legend_items(series, 0, 14, width)
    legend_h = legend_y + 12
    height = legend_h + len(categories) * (group_h + group_gap) + 24
    top = max(
        maximum or 0.0,
        _nice_max([b.ci_high if b.ci_high is not None else b.value for b in values.values()]),
    )
    parts = [legend]
    bottom = height - 22
    parts.append(_axis_ticks(x0, x1, legend_h - 4, bottom, top))
    y = legend_h + 4
    for category in categories:
        parts.append(
            f'<text class="label" x="{x0 - 8}" y="{y + group_h / 2 + 4:.1f}" '
            f'text-anchor="end">{_e(category)}</text>'
        )
        for s in series:
            bar = values.get((category, s.key), Bar(None))
            if bar.value is not None:
                w = max(0.0, (x1 - x0) * min(bar.value / top, 1.0))
                tip = f"{category}, {s.label}: {pct(bar.value)}"
                if bar.numerator is not None and bar.denominator is not None:
                    tip += f" = {bar.numerator:,.0f} / {bar.denominator:,.0f}"
                if bar.ci_low is not None and bar.ci_high is not None:
                    tip += f" (95% CI {pct(bar.ci_low)} to {pct(bar.ci_high)})"
                parts.append(
                    f'<rect class="bar {s.css}" x="{x0}" y="{y:.1f}" width="{w:.1f}" '
                    f'height="{bar_h}" rx="2"><title>{_e(tip)}</title></rect>'
                )
                if bar.ci_low is not None and bar.ci_high is not None:
                    lo = x0 + (x1 - x0) * min(bar.ci_low / top, 1.0)
                    hi = x0 + (x1 - x0) * min(bar.ci_high / top, 1.0)
                    mid = y + bar_h / 2
                    parts.append(
                        f'<path class="whisker" d="M{lo:.1f},{mid:.1f}H{hi:.1f}'
                        f"M{lo:.1f},{mid - 3:.1f}V{mid + 3:.1f}M{hi:.1f},{mid - 3:.1f}"
                        f'V{mid + 3:.1f}"/>'
                    )
                parts.append(
                    f'<text class="value" x="{x0 + w + 6:.1f}" y="{y + bar_h - 2:.1f}">'
                    f"{pct(bar.value)}</text>"
                )
            else:
                parts.append(
                    f'<text class="value muted" x="{x0 + 4}" y="{y + bar_h - 2:.1f}">n/a</text>'
                )
            y += bar_h + gap
        y += group_gap - gap
    return _svg(width, height, title, desc, "".join(parts))


def _text_width(text: str, size: float = 12) -> float:
    """Rough rendered width of `text` in a sans-serif font of `size` px."""
    wide = sum(1 for c in text if c.isupper() or c.isdigit() or c in "@%mw")
    return size * (0.68 * wide + 0.52 * (len(text) - wide))


def _legend_items(series: Sequence[Series], x: float, y: float, width: float) -> tuple[str, float]:
    """Legend swatches, wrapped to `width`; returns the SVG and the y of its last line."""
    parts = []
    start = x
    for s in series:
        item = 26 + _text_width(s.label)
        if x > start and x + item > width:
            x, y = start, y + 17
        parts.append(
            f'<rect class="bar {s.css}" x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" rx="2"/>'
            f'<text class="legend" x="{x + 14:.1f}" y="{y:.1f}">{_e(s.label)}</text>'
        )
        x += item
    return "".join(parts), y


def _legend(series: Sequence[Series], x: float, y: float, width: float = 560) -> str:
    return _legend_items(series, x, y, width)[0]


@dataclass(frozen=True)
class Pair:
    label: str
    naive: Bar
    corrected: Bar


def dumbbell(
    pairs: Sequence[Pair],
    naive_label: str,
    corrected_label: str,
    title: str,
    desc: str,
    label_width: int = 170,
) -> str:
    """Naive vs corrected value per row: two dots joined by a line; the lower
    value is labelled on its left, the higher on its right, so labels never collide."""
    width, row_h = 560, 34
    x0, x1 = label_width, width - 40
    legend, legend_y = _legend_items(
        [Series("naive", naive_label, "naive"), Series("corrected", corrected_label, "fixed")],
        0,
        14,
        width,
    )
    legend_h = legend_y + 12
    height = legend_h + len(pairs) * row_h + 26
    top = _nice_max([v for p in pairs for v in (p.naive.value, p.corrected.value)])
    parts = [legend]
    bottom = height - 22
    parts.append(_axis_ticks(x0, x1, legend_h - 4, bottom, top))
    y = legend_h + row_h / 2
    for pair in pairs:
        parts.append(
            f'<text class="label" x="{x0 - 8}" y="{y + 4:.1f}" text-anchor="end">'
            f"{_e(pair.label)}</text>"
        )
        xs = {}
        for key, bar in (("naive", pair.naive), ("fixed", pair.corrected)):
            if bar.value is not None:
                xs[key] = x0 + (x1 - x0) * min(bar.value / top, 1.0)
        if len(xs) == 2:
            parts.append(
                f'<line class="connector" x1="{xs["naive"]:.1f}" y1="{y:.1f}" '
                f'x2="{xs["fixed"]:.1f}" y2="{y:.1f}"/>'
            )
        for key, bar, name in (
            ("naive", pair.naive, naive_label),
            ("fixed", pair.corrected, corrected_label),
        ):
            if key not in xs:
                continue
            tip = f"{pair.label}, {name}: {pct(bar.value)}"
            if bar.numerator is not None and bar.denominator is not None:
                tip += f" = {bar.numerator:,.0f} / {bar.denominator:,.0f}"
            other = xs.get("fixed" if key == "naive" else "naive")
            on_left = other is not None and (
                xs[key] < other or (xs[key] == other and key == "naive")
            )
            tx, ty, anchor = (
                (xs[key] - 9, y + 4, "end") if on_left else (xs[key] + 9, y + 4, "start")
            )
            if on_left and xs[key] - x0 < 42:  # no room on the left: above the dot
                tx, ty, anchor = xs[key], y - 9, "middle"
            parts.append(
                f'<circle class="dot {key}" cx="{xs[key]:.1f}" cy="{y:.1f}" r="6">'
                f"<title>{_e(tip)}</title></circle>"
                f'<text class="value small" x="{tx:.1f}" y="{ty:.1f}" '
                f'text-anchor="{anchor}">{pct(bar.value)}</text>'
            )
        y += row_h
    return _svg(width, height, title, desc, "".join(parts))


def stacked_share(
    parts_in: Sequence[tuple[str, float, str]], title: str, desc: str, total_label: str
) -> str:
    """One 100% bar split into labelled parts: (label, count, css class), with a
    legend line below giving every part's share."""
    width, height = 560, 70
    # A mart with no rows to count (e.g. no outcome events logged) gives null counts.
    parts_in = [
        (label, 0 if count is None or count != count else count, css)  # None or NaN
        for label, count, css in parts_in
    ]
    total = sum(count for _, count, _ in parts_in)
    parts = []
    x = 0.0
    for label, count, css in parts_in:
        share = count / total if total else 0.0
        w = width * share
        tip = f"{label}: {count:,.0f} of {total:,.0f} ({pct(share)})"
        parts.append(
            f'<rect class="bar {css}" x="{x:.1f}" y="8" width="{w:.1f}" height="26">'
            f"<title>{_e(tip)}</title></rect>"
        )
        if w > _text_width(f"{label} {pct(share)}") + 16:
            parts.append(
                f'<text class="inbar" x="{x + 8:.1f}" y="26">{_e(label)} {pct(share)}</text>'
            )
        x += w
    legend_x = 0.0
    for label, count, css in parts_in:
        share = count / total if total else 0.0
        text = f"{label} {pct(share)}"
        parts.append(
            f'<rect class="bar {css}" x="{legend_x:.1f}" y="43" width="10" height="10" rx="2"/>'
            f'<text class="legend" x="{legend_x + 14:.1f}" y="52">{_e(text)}</text>'
        )
        legend_x += 26 + _text_width(text)
    parts.append(f'<text class="tick" x="0" y="68">{_e(total_label)}: {total:,.0f}</text>')
    return _svg(width, height + 6, title, desc, "".join(parts))


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    highlight: bool
    tip: str


def scatter(
    points: Sequence[Point],
    tau_low: float,
    tau_high: float,
    title: str,
    desc: str,
    x_label: str,
    y_label: str,
    highlight_label: str,
    other_label: str,
    shares: dict[str, float | None] | None = None,
) -> str:
    """Percentile scatter on [0, 1] x [0, 1] with the bridge cell shaded
    (x < tau_low, y > tau_high) and quadrant shares in the corners."""
    size, pad_l, pad_b, pad_t, pad_r = 340, 46, 40, 26, 12
    width, height = pad_l + size + pad_r, pad_t + size + pad_b

    def sx(v: float) -> float:
        return pad_l + size * v

    def sy(v: float) -> float:
        return pad_t + size * (1 - v)

    parts = [
        f'<rect class="plot-bg" x="{pad_l}" y="{pad_t}" width="{size}" height="{size}"/>',
        f'<rect class="bridge-cell" x="{sx(0):.1f}" y="{sy(1):.1f}" '
        f'width="{size * tau_low:.1f}" height="{size * (1 - tau_high):.1f}">'
        f"<title>Bridge cell: SRU percentile &lt; {tau_low}, CTU percentile &gt; {tau_high}"
        f"</title></rect>",
    ]
    for step in range(5):
        v = step / 4
        parts.append(
            f'<line class="grid" x1="{sx(v):.1f}" y1="{pad_t}" x2="{sx(v):.1f}" '
            f'y2="{pad_t + size}"/><line class="grid" x1="{pad_l}" y1="{sy(v):.1f}" '
            f'x2="{pad_l + size}" y2="{sy(v):.1f}"/>'
            f'<text class="tick" x="{sx(v):.1f}" y="{pad_t + size + 14}" '
            f'text-anchor="middle">{v:.2g}</text>'
            f'<text class="tick" x="{pad_l - 6}" y="{sy(v) + 4:.1f}" text-anchor="end">'
            f"{v:.2g}</text>"
        )
    parts.append(
        f'<line class="threshold" x1="{sx(tau_low):.1f}" y1="{pad_t}" x2="{sx(tau_low):.1f}" '
        f'y2="{pad_t + size}"/><line class="threshold" x1="{pad_l}" y1="{sy(tau_high):.1f}" '
        f'x2="{pad_l + size}" y2="{sy(tau_high):.1f}"/>'
    )
    for point in sorted(points, key=lambda p: p.highlight):
        css = "pt hi" if point.highlight else "pt"
        parts.append(
            f'<circle class="{css}" cx="{sx(point.x):.1f}" cy="{sy(point.y):.1f}" r="2.4">'
            f"<title>{_e(point.tip)}</title></circle>"
        )
    if shares:
        corners = {
            "low_sru_high_ctu": (sx(0) + 6, sy(1) + 16, "start"),
            "high_sru_high_ctu": (sx(1) - 6, sy(1) + 16, "end"),
            "low_sru_low_ctu": (sx(0) + 6, sy(0) - 8, "start"),
            "high_sru_low_ctu": (sx(1) - 6, sy(0) - 8, "end"),
        }
        for quadrant, (x, y, anchor) in corners.items():
            if quadrant in shares:
                parts.append(
                    f'<text class="corner" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">'
                    f"{pct(shares[quadrant])}</text>"
                )
    parts.append(
        f'<text class="axis-label" x="{pad_l + size / 2}" y="{height - 6}" '
        f'text-anchor="middle">{_e(x_label)}</text>'
        f'<text class="axis-label" transform="translate(12,{pad_t + size / 2}) rotate(-90)" '
        f'text-anchor="middle">{_e(y_label)}</text>'
    )
    legend = [Series("hi", highlight_label, "pt-hi"), Series("other", other_label, "pt-lo")]
    parts.append(_legend(legend, pad_l, 14))
    return _svg(width, height, title, desc, "".join(parts), css="chart scatter")
