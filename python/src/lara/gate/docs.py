"""Make GX Data Docs render offline.

GX's Data Docs pages load Bootstrap, jQuery, bootstrap-table, Font Awesome and
Vega from CDNs, show a logo from S3 and link to the GX website. The gate's
reports must open on a machine without internet access, so after GX has built
the site this module rewrites every HTML file:

- `<script src>` / `<link href>` pointing to the internet are removed, and a
  small stylesheet and script (gx/data_docs/offline.css, offline.js: a few
  layout rules and a stand-in for the jQuery calls the pages make) are inlined;
- remote images are replaced by GX's own local copy of its logo;
- links and forms to the internet are unwrapped (their text stays), and any
  other attribute holding an internet URL is dropped;
- the index page gets a summary of the gate run on top.

Nothing of GX itself is patched: this only edits the generated files.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lara.gate.safe import run_name
from lara.paths import project_dir

URL = r"""https?://[^"'\s>]*"""
SCRIPT_REMOTE = re.compile(
    rf"""<script\b[^>]*\bsrc\s*=\s*["']{URL}["'][^>]*>\s*</script>""", re.IGNORECASE
)
LINK_REMOTE = re.compile(rf"""<link\b[^>]*\bhref\s*=\s*["']{URL}["'][^>]*>""", re.IGNORECASE)
IMG_REMOTE = re.compile(rf"""(<img\b[^>]*\bsrc\s*=\s*["']){URL}(["'])""", re.IGNORECASE)
ANCHOR_REMOTE = re.compile(
    rf"""<a\b[^>]*\bhref\s*=\s*["']{URL}["'][^>]*>(.*?)</a>""", re.IGNORECASE | re.DOTALL
)
FORM_REMOTE = re.compile(
    rf"""<form\b[^>]*\baction\s*=\s*["']{URL}["'][^>]*>.*?</form>""", re.IGNORECASE | re.DOTALL
)
CSS_URL_REMOTE = re.compile(r"""url\(\s*['"]?https?://[^)]*\)""", re.IGNORECASE)
ATTRIBUTE_REMOTE = re.compile(rf"""\s[\w:-]+\s*=\s*["']{URL}["']""", re.IGNORECASE)
BARE_URL = re.compile(r"""https?://[^\s"'<>)]+""", re.IGNORECASE)
HEAD = re.compile(r"<head\b[^>]*>", re.IGNORECASE)
BODY = re.compile(r"<body\b[^>]*>", re.IGNORECASE)
# GX's call-to-action footer: internet-only content.
CTA_FOOTER = re.compile(r"""<footer\b[^>]*id="ge-cta-footer".*?</footer>""", re.DOTALL)


def _assets_dir() -> Path:
    return project_dir() / "gx" / "data_docs"


def _inline_assets() -> str:
    folder = _assets_dir()
    css = (folder / "offline.css").read_text()
    js = (folder / "offline.js").read_text()
    return f"\n<style>\n{css}</style>\n<script>\n{js}</script>\n"


def _strip_urls_in_scripts(text: str) -> str:
    """Internet URLs left inside inline scripts or text (GX's own template links)."""
    return BARE_URL.sub("[link removed]", text)


def offline_html(text: str, logo: str, assets: str) -> str:
    """One HTML page with every internet reference removed and the assets inlined."""
    text = SCRIPT_REMOTE.sub("", text)
    text = LINK_REMOTE.sub("", text)
    text = FORM_REMOTE.sub("", text)
    text = CTA_FOOTER.sub("", text)
    text = CSS_URL_REMOTE.sub("none", text)
    text = IMG_REMOTE.sub(lambda m: f"{m.group(1)}{logo}{m.group(2)}", text)
    text = ANCHOR_REMOTE.sub(lambda m: m.group(1), text)
    text = ATTRIBUTE_REMOTE.sub("", text)
    text = _strip_urls_in_scripts(text)
    match = HEAD.search(text)
    if match:
        text = text[: match.end()] + assets + text[match.end() :]
    else:
        text = assets + text
    return text


def _partition_cell(partition: str) -> str:
    """The partition as text; a folder that is not a day also gets its Data Docs run name."""
    token = run_name(partition)
    shown = html.escape(partition)
    return shown if token == partition else f"{shown}<br><small>run {html.escape(token)}</small>"


def _summary_html(checks: Iterable[Any], verdict: str) -> str:
    failed = [c for c in checks if not c.success]
    rows = []
    for c in failed:
        sample = ", ".join(
            html.escape(" ".join(str(v) for v in item.values())) for item in c.sample[:5]
        )
        count = "" if c.unexpected_count is None else f"{c.unexpected_count:,}"
        observed = "" if c.observed_value is None else html.escape(str(c.observed_value))
        rows.append(
            "<tr>"
            f"<td>{_partition_cell(c.partition)}</td><td>{html.escape(c.table)}</td>"
            f"<td><code>{html.escape(c.name)}</code></td><td>{html.escape(c.severity)}</td>"
            f"<td>{count}</td><td>{observed}</td><td class='sample'>{sample}</td>"
            "</tr>"
        )
    if rows:
        table = (
            "<table class='table-sm'><thead><tr><th>Partition</th><th>Table</th>"
            "<th>Check</th><th>Severity</th><th>Failing rows</th><th>Observed</th>"
            "<th>Sample (key, source)</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
        )
    else:
        table = "<p>Every check passed.</p>"
    return (
        "<div class='lara-gate-summary card'><div class='card-header'>"
        f"<strong>LARA data-quality gate: <span class='verdict-{html.escape(verdict)}'>"
        f"{html.escape(verdict)}</span>"
        f"</strong> ({len(failed)} failed check(s); full list in gate_results.json and "
        "failing_ids.csv next to this folder)</div>"
        f"<div class='card-body'>{table}</div></div>"
    )


def make_offline(
    docs_root: Path, checks: Iterable[Any] | None = None, verdict: str = "passed"
) -> list[Path]:
    """Rewrite every HTML file under `docs_root` in place; returns the files.

    With `checks` (the gate's CheckResult rows), the index page gets a summary
    of the run (verdict and failed checks) on top.
    """
    assets = _inline_assets()
    pages = sorted(docs_root.rglob("*.html"))
    logo_file = docs_root / "static" / "images" / "logo-long.png"
    checks = list(checks or [])
    for page in pages:
        logo = Path(os.path.relpath(logo_file, page.parent)).as_posix()
        text = offline_html(page.read_text(encoding="utf-8"), logo, assets)
        if page == docs_root / "index.html" and checks:
            match = BODY.search(text)
            if match:
                summary = _summary_html(checks, verdict)
                text = text[: match.end()] + summary + text[match.end() :]
        page.write_text(text, encoding="utf-8")
    for sheet in docs_root.rglob("*.css"):  # GX's copied stylesheet points to S3 too
        sheet.write_text(CSS_URL_REMOTE.sub("none", sheet.read_text(encoding="utf-8")))
    return pages


def external_urls(docs_root: Path) -> dict[str, list[str]]:
    """Every http(s) URL left in the HTML, CSS and JS files (the tests expect none)."""
    found: dict[str, list[str]] = {}
    files = [p for p in sorted(docs_root.rglob("*")) if p.suffix in (".html", ".css", ".js")]
    for page in files:
        urls = BARE_URL.findall(page.read_text(encoding="utf-8"))
        if urls:
            found[str(page.relative_to(docs_root))] = urls
    return found
