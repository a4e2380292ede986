"""Inline SVG drawn in Python for the dashboard's unfiltered charts (the bridge scatter).

The filtered charts (trends, bars, dumbbells, shares) are drawn by the
page's script (dashboard.js) with the same classes and conventions.

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


@dataclass(frozen=True)
class Series:
    key: str
    label: str
    css: str  # colour class: fill for bars, stroke for dots


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
