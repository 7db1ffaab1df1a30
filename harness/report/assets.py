"""The certificate's inline CSS, script and legend (no network: the page is self-contained)."""

from __future__ import annotations

LEGEND = (
    '<p class="legend">Marks: <span class="ln hit">named by a violation</span> '
    '<span class="ln added">in the upstream request, not at that path in the client request</span> '
    '<span class="ln changed">value differs from the client request (hover)</span> '
    '<span class="ln dropped">in the client request, not at that path upstream</span></p>'
)

SCRIPT = """
(function () {
  var q = document.getElementById('q'), o = document.getElementById('o');
  var shown = document.getElementById('shown');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#rules tbody tr'));
  function apply() {
    var text = q.value.toLowerCase().trim(), want = o.value, n = 0;
    rows.forEach(function (row) {
      var ok = (!text || row.getAttribute('data-text').indexOf(text) >= 0) &&
        (want === 'all' || (want === 'problems' ? row.getAttribute('data-problem') === '1'
                                                : row.getAttribute('data-outcome') === want));
      row.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = n + ' of ' + rows.length + ' shown';
  }
  q.addEventListener('input', apply);
  o.addEventListener('change', apply);
  document.getElementById('filters').hidden = false;
  apply();
  document.body.setAttribute('data-filter-ready', String(rows.length));
})();
"""

CSS = """
:root{--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--na:#6e7781;--err:#8250df;--xfail:#0969da;
--bg:#f6f8fa;--line:#d0d7de;--ink:#1f2328;--muted:#656d76}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",
Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1400px;margin:0 auto;padding:0 24px 40px}
h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:0 0 8px}
code,pre,.cmd{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12px}
.muted{color:var(--muted)}
.top{display:flex;gap:28px;align-items:stretch;padding:22px 24px;background:#fff;border-bottom:1px solid var(--line);
border-top:6px solid var(--pass)}
.top.v-FAIL{border-top-color:var(--fail)}.top.v-INCOMPLETE,.top.v-INTERRUPTED{border-top-color:var(--warn)}
.verdict{min-width:220px;border-radius:10px;padding:16px 18px;color:#fff;background:var(--pass);
display:flex;flex-direction:column;justify-content:center}
.v-FAIL .verdict{background:var(--fail)}.v-INCOMPLETE .verdict,.v-INTERRUPTED .verdict{background:var(--warn)}
.vword{font-size:34px;font-weight:700;letter-spacing:.04em}.vtext{font-size:13px;opacity:.95}
.facts h1{margin:0 0 8px;font-size:22px}
.facts dl{display:grid;grid-template-columns:auto 1fr;gap:2px 14px;margin:0 0 8px}
.facts dt{color:var(--muted)}.facts dd{margin:0}
.profiles{margin:0;padding-left:18px}
.chip{display:inline-block;padding:1px 7px;border-radius:10px;font-size:11px;font-weight:600;color:#fff;
white-space:nowrap;vertical-align:middle;background:var(--na)}
.o-PASS{background:var(--pass)}.o-FAIL,.o-XPASS{background:var(--fail)}.o-WARN{background:var(--warn)}
.o-HARNESS_ERROR,.o-INCOMPLETE,.o-INTERRUPTED{background:var(--err)}.o-XFAIL{background:var(--xfail)}
.o-NOT_APPLICABLE,.o-SKIP{background:var(--na)}
.areagrid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}
.areabox{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
thead th{font-size:12px;color:var(--muted);font-weight:600;background:#fff}
td.num{text-align:right;font-variant-numeric:tabular-nums}td.zero{color:#c5cbd1}
tr.all th,tr.all td{font-weight:700;border-top:2px solid var(--line)}
.barcell{width:30%}.bar{display:flex;height:10px;border-radius:5px;overflow:hidden;background:#eaeef2;margin-top:4px}
.bar span{display:block;height:100%}
.filters{display:flex;gap:10px;align-items:center;margin:0 0 8px}
.filters input{flex:1;max-width:480px;padding:6px 9px;border:1px solid var(--line);border-radius:6px;font:inherit}
.filters select{padding:6px;border:1px solid var(--line);border-radius:6px;font:inherit;background:#fff}
.rules{border:1px solid var(--line)}.rules thead th{position:sticky;top:0}
.rules tr[data-problem="1"]{background:#fff8f8}
.variant,.why{font-size:12px;color:var(--muted)}.why{font-family:ui-monospace,monospace;word-break:break-word}
.count{display:inline-block;background:var(--fail);color:#fff;border-radius:10px;padding:0 8px;font-size:13px}
.failure{background:#fff;border:1px solid var(--line);border-left:5px solid var(--fail);border-radius:8px;
padding:14px 16px;margin:0 0 22px}
.failure h3 code{font-size:14px}.level{font-size:11px;border:1px solid var(--line);border-radius:4px;padding:0 4px}
.ftitle{font-weight:400}
.quote{margin:8px 0;padding:8px 14px;border-left:4px solid #8c959f;background:#f6f8fa;font-size:15px}
.quote p{margin:0}.quote footer{font-size:12px;color:var(--muted);margin-top:4px}
.reason,.reading{margin:6px 0}
.violations{margin:10px 0;border:1px solid var(--line)}.violations td{font-size:13px;overflow-wrap:anywhere}
.violations td:first-child{white-space:nowrap}.violations td:nth-child(3){width:38%}
p.line.hit{background:#ffebe9;box-shadow:inset 3px 0 var(--fail);padding:1px 8px;color:var(--fail);font-weight:600}
.panes{display:grid;grid-template-columns:1fr 1fr;grid-template-areas:"p1 p2" "p4 p3";gap:10px;margin:12px 0}
.p1{grid-area:p1}.p2{grid-area:p2}.p3{grid-area:p3}.p4{grid-area:p4}
.pane{border:1px solid var(--line);border-radius:6px;padding:8px 10px;min-width:0;background:#fcfcfd}
.pane h4{margin:0 0 6px;font-size:13px}.pane .side{font-weight:400;color:var(--muted);font-size:12px}
.pane h4 .pn{display:inline-block;background:var(--ink);color:#fff;border-radius:50%;width:18px;height:18px;
text-align:center;font-size:11px;line-height:18px}
.line{margin:2px 0;font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
.call+.call{border-top:1px dashed var(--line);margin-top:8px;padding-top:6px}
.callno{background:#eaeef2;border-radius:4px;padding:0 4px}
pre.body{margin:4px 0;padding:6px 0;background:#fff;border:1px solid #eaeef2;border-radius:4px;max-height:460px;
overflow:auto;white-space:pre-wrap;word-break:break-word}
.ln{display:block;padding:0 8px 0 22px;position:relative;min-height:1.2em}
.ln::before{position:absolute;left:6px;font-weight:700}
.ln.hit{background:#ffebe9;box-shadow:inset 3px 0 var(--fail)}.ln.hit::before{content:"!";color:var(--fail)}
.ln.added{background:#dafbe1}.ln.added::before{content:"+";color:var(--pass)}
.ln.dropped{background:#fff1e5;text-decoration:line-through;text-decoration-color:#bc4c00}
.ln.dropped::before{content:"\\2212";color:#bc4c00}
.ln.changed{background:#fff8c5}.ln.changed::before{content:"~";color:var(--warn)}
.legend .ln{display:inline-block;margin:0 6px 4px 0;border-radius:4px;font-size:12px}
.k{color:#0550ae}.v{color:#0a3069}.ev{display:inline-block;min-width:34px;color:var(--muted)}
.note{color:var(--fail);font-weight:600}
.diffnote{margin:4px 0;font-size:12px}.m-added{color:var(--pass)}.m-dropped{color:#bc4c00}.m-changed{color:var(--warn)}
details.headers summary{cursor:pointer;font-size:12px;color:var(--muted)}
.rerun-label{margin:10px 0 2px;font-size:12px;color:var(--muted)}
.cmd{background:#1f2328;color:#e6edf3;padding:8px 12px;border-radius:6px;white-space:pre-wrap;word-break:break-all;
user-select:all;margin:0}
.runproblems{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:6px 10px;margin-bottom:8px}
.runproblems ul{margin:4px 0 0;padding-left:18px}
.foot{max-width:1400px;margin:0 auto;padding:10px 24px 30px;color:var(--muted);font-size:12px}
@media (max-width:900px){.panes{grid-template-columns:1fr;grid-template-areas:"p1" "p2" "p3" "p4"}
.top{flex-direction:column}}
@media print{.filters{display:none}pre.body{max-height:none}}
"""
