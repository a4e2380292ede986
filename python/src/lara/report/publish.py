"""Marking a dashboard as not published (kept apart from the page itself).

`lara run` publishes the dashboard only when the data-quality gate passes.
Otherwise it writes it beside (`reports/unpublished/dashboard.html`) and marks
it here: a banner at the top of the page, `NOT PUBLISHED` in the title and a
`<meta name="lara-published" content="false">` for tools. The reason is
escaped like every other value on the page.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

BANNER_ID = "lara-unpublished"
BODY = re.compile(r"<body\b[^>]*>", re.IGNORECASE)
TITLE = re.compile(r"<title>", re.IGNORECASE)
HEAD = re.compile(r"<head\b[^>]*>", re.IGNORECASE)


def unpublished_banner(reason: str) -> str:
    """The banner: not published, and why."""
    return (
        f'<div id="{BANNER_ID}" role="alert" style="background:#b3261e;color:#fff;'
        'padding:14px 20px;font:600 16px/1.4 system-ui,sans-serif;border-bottom:4px solid #7a1a14">'
        "NOT PUBLISHED: these numbers come from a run whose data-quality gate failed. "
        f'<span style="font-weight:400">{html.escape(reason)}</span></div>'
    )


def mark_unpublished_html(page: str, reason: str) -> str:
    """`page` with the banner, the title prefix and the meta tag."""
    match = BODY.search(page)
    banner = unpublished_banner(reason)
    page = page[: match.end()] + banner + page[match.end() :] if match else banner + page
    page = TITLE.sub("<title>NOT PUBLISHED · ", page, count=1)
    meta = '<meta name="lara-published" content="false">'
    match = HEAD.search(page)
    return page[: match.end()] + meta + page[match.end() :] if match else meta + page


def mark_unpublished(path: Path, reason: str) -> Path:
    """Mark the dashboard file at `path` as not published (rewritten atomically)."""
    path = Path(path)
    text = mark_unpublished_html(path.read_text(encoding="utf-8"), reason)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path
