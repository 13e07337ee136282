/**
 * The console's own browser code, served as /assets/console.js (the page's Content-Security-Policy
 * allows scripts from the console only, no inline script). It only hands the numbers the server
 * rendered into each chart element (`data-chart`, JSON of cli/console/model.ts ChartData) to uPlot,
 * after the page loads and after every htmx swap; uPlot draws them. Everything else on the page is
 * server-rendered HTML that htmx fetches, posts and swaps.
 */
export const CONSOLE_JS = String.raw`(function () {
  'use strict';
  function lineOpts(title, width, series, scales, axes) {
    return { title: title, width: width, height: 220, scales: scales, series: series, axes: axes, legend: { live: true } };
  }
  function draw(el) {
    if (el.getAttribute('data-drawn') === '1' || typeof uPlot === 'undefined') return;
    var d = JSON.parse(el.getAttribute('data-chart'));
    var kind = el.getAttribute('data-kind');
    var width = Math.max(320, Math.min(el.clientWidth || 640, 900));
    var x = { time: false };
    var opts, data;
    if (kind === 'cost') {
      data = [d.iterations, d.costUsd, d.iterations.map(function () { return d.budgetUsd; })];
      opts = lineOpts('Cost over iterations (USD) against the budget', width,
        [{ label: 'iteration' }, { label: 'spent', stroke: '#c0392b', width: 2, points: { show: true } }, { label: 'budget', stroke: '#7f8c8d', dash: [6, 4] }],
        { x: x }, [{ label: 'iteration' }, { label: 'USD' }]);
    } else if (kind === 'progress') {
      data = [d.iterations, d.filesChanged, d.testsPassing];
      opts = lineOpts('Files changed and tests passing over iterations', width,
        [{ label: 'iteration' }, { label: 'files changed since start', stroke: '#2471a3', width: 2, scale: 'files', points: { show: true } },
         { label: 'tests passing (1 yes, 0 no)', stroke: '#1e8449', scale: 'tests', points: { show: true, size: 8 }, paths: function () { return null; } }],
        { x: x, files: { auto: true }, tests: { range: [-0.1, 1.1] } },
        [{ label: 'iteration' }, { label: 'files', scale: 'files' }, { label: 'tests', scale: 'tests', side: 1, grid: { show: false } }]);
    } else {
      data = [d.waits.pauses, d.waits.minutes];
      opts = lineOpts('Time waiting for people (minutes per pause)', width,
        [{ label: 'pause' }, { label: 'minutes waiting', stroke: '#b9770e', fill: 'rgba(185,119,14,0.3)', paths: uPlot.paths.bars({ size: [0.5, 60] }) }],
        { x: { time: false, range: function (u, min, max) { return [min - 1, max + 1]; } } }, [{ label: 'pause' }, { label: 'minutes' }]);
    }
    el.innerHTML = '';
    new uPlot(opts, data, el);
    el.setAttribute('data-drawn', '1');
  }
  function drawAll(root) {
    var els = (root || document).querySelectorAll('[data-chart]');
    for (var i = 0; i < els.length; i++) draw(els[i]);
  }
  document.addEventListener('DOMContentLoaded', function () { drawAll(document); });
  document.addEventListener('htmx:afterSettle', function (e) { drawAll(e.target); });
})();
`;

/** The console's style sheet (/assets/console.css). */
export const CONSOLE_CSS = String.raw`
:root { font-family: system-ui, sans-serif; color: #1c2833; background: #fbfcfc; }
body { margin: 0; }
header { display: flex; gap: 1.5rem; align-items: center; padding: 0.6rem 1.2rem; background: #1c2833; color: #fff; }
header a { color: #fff; text-decoration: none; font-weight: 600; }
header .who { margin-left: auto; font-size: 0.85rem; }
header .who input { width: 9rem; }
main { padding: 1rem 1.2rem; max-width: 1200px; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin: 0.2rem 0; }
.card { border: 1px solid #d5d8dc; border-left: 6px solid #b9770e; border-radius: 6px; padding: 0.8rem 1rem; margin-bottom: 1rem; background: #fff; }
.kind { font-size: 0.8rem; background: #fdebd0; border-radius: 4px; padding: 0.1rem 0.4rem; margin-left: 0.5rem; }
.why { font-weight: 600; white-space: pre-wrap; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 0.8rem; margin: 0.4rem 0; }
dl.facts dt { color: #566573; }
pre { background: #f4f6f6; padding: 0.6rem; overflow: auto; max-height: 28rem; white-space: pre-wrap; word-break: break-word; }
pre.log { background: #17202a; color: #e5e8e8; max-height: 32rem; }
.actions form { display: inline-flex; gap: 0.4rem; align-items: center; margin: 0.25rem 0.8rem 0.25rem 0; flex-wrap: wrap; }
.actions textarea { width: 32rem; max-width: 90vw; height: 3.2rem; }
#acks .ack { padding: 0.35rem 0.6rem; border-radius: 4px; margin: 0.2rem 0; font-family: ui-monospace, monospace; font-size: 0.85rem; }
.ack.ok { background: #d5f5e3; } .ack.rejected { background: #fadbd8; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { text-align: left; padding: 0.25rem 0.5rem; border-bottom: 1px solid #eaeded; vertical-align: top; }
.status-paused, .status-pausing { color: #b9770e; font-weight: 600; } .status-running { color: #1e8449; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1rem; }
.chart { min-height: 240px; }
.muted { color: #7f8c8d; font-size: 0.85rem; }
.timeline li { margin-bottom: 0.3rem; } .timeline .reason { color: #566573; }
.filters { display: flex; gap: 0.8rem; margin-bottom: 0.6rem; }
`;
