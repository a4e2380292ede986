"""The dashboard's stylesheet, inlined into the page (no external file or font)."""

CSS = """
:root {
  --bg: #f4f6f9; --card: #ffffff; --ink: #1c2530; --muted: #5d6b7a; --faint: #8b97a4;
  --line: #e2e7ee; --grid: #edf0f4; --accent: #2f6fdb; --accent-soft: #e7effc;
  --gpr: #2f6fdb; --acr: #7a5cc7; --orf: #e0583a; --uor: #a3adb9; --done: #22998a;
  --naive: #b3bcc8; --fixed: #2f6fdb; --bridge: #f28e2b; --bridge-soft: rgba(242,142,43,.16);
  --good: #1f9d6a; --warn: #d99a1e; --bad: #d64545;
  --shadow: 0 1px 2px rgba(20,30,45,.06), 0 4px 16px rgba(20,30,45,.05);
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0f141a; --card: #171e26; --ink: #e6ebf1; --muted: #a2afbd; --faint: #7b8896;
    --line: #27313c; --grid: #222b35; --accent: #6ea0ff; --accent-soft: #1d2a40;
    --gpr: #6ea0ff; --acr: #a48cf0; --orf: #ff7b5c; --uor: #6f7b88; --done: #3fc1b0;
    --naive: #5b6775; --fixed: #6ea0ff; --bridge-soft: rgba(242,142,43,.22);
    --shadow: none;
  }
}
* { box-sizing: border-box; }
html { scroll-behavior: smooth; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    sans-serif;
  font-variant-numeric: tabular-nums;
}
header.top {
  background: linear-gradient(135deg, #17324f 0%, #1f4f86 55%, #2f6fdb 100%);
  color: #fff; padding: 36px 0 84px;
}
.wrap { max-width: 1180px; margin: 0 auto; padding: 0 28px; }
header.top h1 { margin: 0 0 6px; font-size: 30px; letter-spacing: -.01em; font-weight: 700; }
header.top p { margin: 0; color: rgba(255,255,255,.82); max-width: 820px; }
header.top .meta { margin-top: 14px; font-size: 13px; color: rgba(255,255,255,.72); }
nav.toc { margin-top: 18px; display: flex; flex-wrap: wrap; gap: 8px; }
nav.toc a {
  color: #fff; text-decoration: none; font-size: 13px; padding: 4px 11px;
  border: 1px solid rgba(255,255,255,.35); border-radius: 999px;
}
nav.toc a:hover { background: rgba(255,255,255,.14); }
main { margin-top: -40px; padding-bottom: 48px; }
.filters { position: sticky; top: 0; z-index: 5; background: var(--card);
  border-bottom: 1px solid var(--line); box-shadow: var(--shadow); padding: 8px 0; }
.filters .wrap { display: flex; flex-direction: column; gap: 6px; }
.filter-group { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; }
.filter-label { font-size: 12px; text-transform: uppercase; letter-spacing: .06em;
  color: var(--muted); font-weight: 600; min-width: 112px; }
button.chip { font: inherit; font-size: 13px; padding: 3px 11px; border-radius: 999px;
  border: 1px solid var(--line); background: var(--bg); color: var(--ink); cursor: pointer; }
button.chip:hover { border-color: var(--accent); }
button.chip[aria-pressed="true"] { background: var(--accent); border-color: var(--accent);
  color: #fff; font-weight: 600; }
.filter-note { font-size: 12.5px; color: var(--muted); font-style: italic; margin: 4px 0 8px; }
.absent { color: var(--muted); font-style: italic; font-weight: 500; font-size: 12.5px; }
.absent-chart { height: 150px; display: flex; align-items: center; justify-content: center;
  border: 1px dashed var(--line); border-radius: 8px; }
.caveat { color: var(--warn); }
h4 { font-size: 13px; margin: 14px 0 2px; color: var(--muted); text-transform: uppercase;
  letter-spacing: .05em; }
.trend-grid { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 14px 22px; }
figure.trend { margin: 0; min-width: 0; }
.trend-title { font-size: 13.5px; font-weight: 600; color: var(--ink); margin: 0 0 2px; }
svg .line { fill: none; stroke-width: 2; }
svg .band { stroke: none; opacity: .16; }
svg .line.gpr, svg .dot.gpr { stroke: var(--gpr); }
svg .band.gpr, svg .dot.gpr { fill: var(--gpr); }
svg .line.acr, svg .dot.acr { stroke: var(--acr); }
svg .band.acr, svg .dot.acr { fill: var(--acr); }
svg .line.orf, svg .dot.orf { stroke: var(--orf); }
svg .band.orf, svg .dot.orf { fill: var(--orf); }
svg .line.done, svg .dot.done { stroke: var(--done); }
svg .band.done, svg .dot.done { fill: var(--done); }
svg .line.naive { stroke: var(--faint); } svg .band.naive { fill: var(--faint); }
svg .line.fixed { stroke: var(--fixed); } svg .band.fixed { fill: var(--fixed); }
.kpis { display: grid; grid-template-columns: repeat(auto-fill, minmax(240px, 1fr)); gap: 14px; }
.kpi {
  background: var(--card); border-radius: 12px; padding: 16px 18px; box-shadow: var(--shadow);
  border: 1px solid var(--line); position: relative; overflow: hidden;
}
.kpi::before { content: ""; position: absolute; inset: 0 auto 0 0; width: 4px;
  background: var(--kpi, var(--accent)); }
.kpi.accent { --kpi: var(--accent); } .kpi.gpr { --kpi: var(--gpr); }
.kpi.acr { --kpi: var(--acr); } .kpi.orf { --kpi: var(--orf); }
.kpi.done { --kpi: var(--done); } .kpi.bridge { --kpi: var(--bridge); }
.kpi .k-value .absent { font-size: 15px; }
.kpi .k-label { font-size: 12px; text-transform: uppercase; letter-spacing: .06em;
  color: var(--muted); font-weight: 600; }
.kpi .k-value { font-size: 30px; font-weight: 700; margin: 4px 0 0; letter-spacing: -.02em; }
.kpi .k-sub { font-size: 12.5px; color: var(--muted); }
section.card {
  background: var(--card); border: 1px solid var(--line); border-radius: 14px;
  box-shadow: var(--shadow); padding: 24px 28px; margin-top: 22px;
}
section.card > h2 { margin: 0 0 4px; font-size: 21px; letter-spacing: -.01em; }
section.card > .lede { margin: 0 0 14px; color: var(--muted); max-width: 880px; }
h3 { font-size: 15.5px; margin: 22px 0 4px; }
.def {
  font-size: 13px; color: var(--muted); background: var(--accent-soft);
  border-radius: 8px; padding: 8px 12px; margin: 6px 0 12px;
}
.def b { color: var(--ink); font-weight: 600; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 22px; }
.grid2 > * { min-width: 0; }
.grid2.tables { grid-template-columns: minmax(0, 1fr); gap: 0; }
.left { display: block; text-align: left; }
figure { margin: 8px 0 0; }
figcaption { font-size: 13px; color: var(--muted); margin-top: 4px; }
svg.chart { width: 100%; height: auto; display: block; overflow: visible; }
svg.scatter { max-width: 440px; }
svg text { font-size: 12px; fill: var(--ink); }
svg .tick { fill: var(--faint); font-size: 11px; }
svg .label { fill: var(--ink); font-size: 12.5px; }
svg .legend { fill: var(--muted); font-size: 12px; }
svg .value { fill: var(--ink); font-size: 11.5px; font-weight: 600; }
svg .value.small { font-size: 11px; }
svg .muted { fill: var(--faint); font-weight: 400; }
svg .inbar { fill: #fff; font-size: 12px; font-weight: 600; }
svg .axis-label { fill: var(--muted); font-size: 12px; }
svg .corner { fill: var(--muted); font-size: 12px; font-weight: 700; }
svg .grid { stroke: var(--grid); stroke-width: 1; }
svg .whisker { stroke: var(--ink); stroke-width: 1.2; fill: none; opacity: .55; }
svg .connector { stroke: var(--faint); stroke-width: 3; opacity: .5; }
svg .threshold { stroke: var(--faint); stroke-dasharray: 4 3; }
svg .plot-bg { fill: none; stroke: var(--line); }
svg .bridge-cell { fill: var(--bridge-soft); stroke: var(--bridge); stroke-dasharray: 3 2; }
svg .bar.gpr { fill: var(--gpr); } svg .bar.acr { fill: var(--acr); }
svg .bar.orf { fill: var(--orf); } svg .bar.uor { fill: var(--uor); }
svg .bar.done { fill: var(--done); } svg .bar.naive { fill: var(--naive); }
svg .bar.fixed { fill: var(--fixed); } svg .bar.q1 { fill: var(--accent); }
svg .bar.q2 { fill: var(--acr); } svg .bar.q3 { fill: var(--uor); }
svg .bar.q4 { fill: var(--bridge); } svg .bar.pt-hi { fill: var(--bridge); }
svg .bar.pt-lo { fill: var(--faint); }
.swatches { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 12.5px; color: var(--muted);
  margin-top: 2px; }
.swatches i { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  margin-right: 5px; vertical-align: -1px; }
.swatches .fixed { background: var(--fixed); } .swatches .acr { background: var(--acr); }
.swatches .done { background: var(--done); } .swatches .uor { background: var(--uor); }
svg .dot.naive { fill: var(--naive); stroke: var(--card); stroke-width: 2; }
svg .dot.fixed { fill: var(--fixed); stroke: var(--card); stroke-width: 2; }
svg .pt { fill: var(--faint); opacity: .45; }
svg .pt.hi { fill: var(--bridge); opacity: .85; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
.table-wrap { overflow-x: auto; margin-top: 8px; }
th, td { padding: 6px 7px; text-align: right; border-bottom: 1px solid var(--line);
  vertical-align: top; white-space: nowrap; }
td .absent { white-space: normal; display: inline-block; max-width: 150px; text-align: right; }
th { white-space: normal; vertical-align: bottom; }
td.wrap { white-space: normal; text-align: left; min-width: 180px; }
td.label { white-space: normal; min-width: 92px; }
.keep-case { text-transform: none; }
th { font-size: 11.5px; text-transform: uppercase; letter-spacing: .05em; color: var(--muted);
  font-weight: 600; background: var(--card); }
th.group { text-align: center; border-bottom: 2px solid var(--line); }
td:first-child, th:first-child { text-align: left; }
tr.total td { font-weight: 700; border-top: 2px solid var(--line); }
.num { font-weight: 600; }
.nd { display: block; font-size: 11px; color: var(--faint); font-weight: 400; }
.pill { display: inline-block; padding: 2px 10px; border-radius: 999px; font-size: 12px;
  font-weight: 700; letter-spacing: .03em; text-transform: uppercase; }
.pill.passed { background: rgba(31,157,106,.14); color: var(--good); }
.pill.warnings { background: rgba(217,154,30,.16); color: var(--warn); }
.pill.failed { background: rgba(214,69,69,.14); color: var(--bad); }
.pill.unknown { background: var(--grid); color: var(--muted); }
.matrix { width: auto; min-width: 560px; max-width: 100%; }
.matrix td, .matrix th { text-align: center; padding: 10px 14px; }
.matrix td.cell { border: 3px solid var(--card); border-radius: 8px; min-width: 150px; }
.matrix .cell .name { display: block; font-size: 12px; font-weight: 600; }
.matrix .cell .num { font-size: 22px; }
.matrix .cell .nd { color: var(--muted); }
.matrix .cell.masked { outline: 2px solid var(--orf); outline-offset: -4px; }
.note { color: var(--muted); font-size: 13px; }
.warn-box { border-left: 4px solid var(--warn); background: rgba(217,154,30,.08);
  padding: 8px 12px; border-radius: 6px; font-size: 13.5px; margin: 10px 0; }
.verdict { display: flex; gap: 18px; align-items: center; flex-wrap: wrap; }
.verdict .big { font-size: 26px; font-weight: 700; }
details { margin-top: 12px; }
details summary { cursor: pointer; color: var(--accent); font-size: 13.5px; }
img.plot { max-width: 100%; border-radius: 8px; border: 1px solid var(--line);
  margin-top: 10px; background: #fff; }
footer { color: var(--muted); font-size: 12.5px; padding: 8px 0 40px; }
footer code, .def code, .lede code { font-size: 12px; }
@media print {
  header.top { background: none; color: var(--ink); padding: 0; }
  header.top p, header.top .meta { color: var(--muted); }
  nav.toc, .filters button.chip[aria-pressed="false"] { display: none; }
  .filters { position: static; box-shadow: none; }
  main { margin-top: 12px; }
  section.card, .kpi { box-shadow: none; break-inside: avoid; }
}
"""
