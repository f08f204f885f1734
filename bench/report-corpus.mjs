/**
 * Report-like HTML documents for bench/write.mjs: what agents publish most (docs/api.md 3.2), about 100 KB each,
 * deterministic per index: inline CSS, a heading and prose, a table of words and numbers, an SVG line chart and a
 * script carrying the chart's data. Such a document gzips to about a fifth of its size.
 */

const WORDS = (
  'revenue churn latency region quarter growth cohort retention forecast pipeline margin budget invoice account ' +
  'customer segment channel campaign conversion funnel backlog release incident uptime throughput capacity queue ' +
  'north south east west enterprise startup partner reseller annual monthly weekly daily target actual variance ' +
  'baseline estimate median percentile outlier trend summary detail owner status active paused closed pending'
).split(' ');

const STYLE = `<style>
:root{--ink:#1f2933;--muted:#616e7c;--line:#d9e2ec;--accent:#2f6fed;--good:#1b873f;--bad:#c92a2a}
*{box-sizing:border-box}body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);
margin:0;padding:2rem;line-height:1.5;background:#fff}header{border-bottom:2px solid var(--line);margin-bottom:1.5rem}
h1{font-size:1.8rem;margin:0 0 .25rem}h2{font-size:1.25rem;margin:2rem 0 .75rem;color:var(--accent)}
.meta{color:var(--muted);font-size:.9rem}.kpis{display:grid;grid-template-columns:repeat(4,1fr);gap:1rem}
.kpi{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem}.kpi b{display:block;font-size:1.4rem}
table{border-collapse:collapse;width:100%;font-size:.85rem}th,td{border-bottom:1px solid var(--line);
padding:.35rem .5rem;text-align:left}th{background:#f5f7fa;position:sticky;top:0}td.num{text-align:right;
font-variant-numeric:tabular-nums}tr:nth-child(even) td{background:#fbfcfd}.up{color:var(--good)}.down{color:var(--bad)}
svg{max-width:100%;height:auto}.axis{stroke:var(--muted);stroke-width:1}.series{fill:none;stroke-width:2}
footer{margin-top:3rem;color:var(--muted);font-size:.8rem}
@media (max-width:640px){.kpis{grid-template-columns:repeat(2,1fr)}body{padding:1rem}}
</style>`;

/** A small deterministic generator (LCG), so documents are the same in every run. */
function generator(index) {
  let seed = ((index + 1) * 2_654_435_761) >>> 0;
  return () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed >>> 8;
  };
}

function sentence(rand, words) {
  return Array.from({ length: words }, () => WORDS[rand() % WORDS.length]).join(' ');
}

function table(rand, rows) {
  const out = [
    '<table><thead><tr><th>Account</th><th>Region</th><th>Segment</th><th>Status</th>',
    '<th>Revenue</th><th>Change</th><th>Users</th><th>Latency ms</th></tr></thead><tbody>',
  ];
  for (let r = 0; r < rows; r++) {
    const change = (rand() % 400) / 10 - 20;
    out.push(
      `<tr><td>${WORDS[rand() % WORDS.length]} ${WORDS[rand() % WORDS.length]}</td>` +
        `<td>${WORDS[24 + (rand() % 4)]}</td><td>${WORDS[28 + (rand() % 4)]}</td><td>${WORDS[52 + (rand() % 4)]}</td>` +
        `<td class="num">${(rand() % 9_000_000) + 1000}</td>` +
        `<td class="num ${change >= 0 ? 'up' : 'down'}">${change.toFixed(1)}%</td>` +
        `<td class="num">${rand() % 50_000}</td><td class="num">${(rand() % 2000) / 10}</td></tr>\n`,
    );
  }
  out.push('</tbody></table>');
  return out.join('');
}

function chart(rand, points) {
  const series = ['#2f6fed', '#1b873f', '#c92a2a'].map((colour) => {
    let y = 150 + (rand() % 100);
    const coords = Array.from({ length: points }, (_, i) => {
      y = Math.max(10, Math.min(290, y + (rand() % 21) - 10));
      return `${i === 0 ? 'M' : 'L'}${(40 + i * (740 / points)).toFixed(1)},${y}`;
    });
    return { colour, path: coords.join(' '), values: coords.length };
  });
  const ticks = Array.from(
    { length: 11 },
    (_, i) =>
      `<line class="axis" x1="${40 + i * 74}" y1="300" x2="${40 + i * 74}" y2="305"/>` +
      `<text x="${40 + i * 74}" y="320" font-size="10" text-anchor="middle">W${i + 1}</text>`,
  ).join('');
  return (
    '<svg viewBox="0 0 800 330" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Weekly trend">' +
    '<line class="axis" x1="40" y1="300" x2="780" y2="300"/><line class="axis" x1="40" y1="10" x2="40" y2="300"/>' +
    ticks +
    series.map((s) => `<path class="series" stroke="${s.colour}" d="${s.path}"/>`).join('') +
    '</svg>'
  );
}

function script(rand, values) {
  const data = Array.from({ length: values }, () => rand() % 10_000);
  return (
    `<script>const DATA=${JSON.stringify(data)};` +
    'document.querySelectorAll("td.num").forEach(function(td){td.title=td.textContent});' +
    'function total(){return DATA.reduce(function(a,b){return a+b},0)}' +
    'document.getElementById("total").textContent=String(total());</script>'
  );
}

/**
 * A report of about `bytes` bytes (UTF-8), distinct per `index`.
 * @param {number} index
 * @param {number} [bytes]
 */
export function reportHtml(index, bytes = 100_000) {
  const rand = generator(index);
  const head =
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Report ${index}: ` +
    `${sentence(rand, 3)}</title>\n${STYLE}\n</head>\n<body>\n<header><h1>Quarterly report ${index}</h1>` +
    `<p class="meta">Prepared for the ${sentence(rand, 2)} team · total <span id="total"></span></p></header>\n`;
  const kpis = `<section class="kpis">${Array.from(
    { length: 4 },
    () => `<div class="kpi">${sentence(rand, 2)}<b>${rand() % 100_000}</b></div>`,
  ).join('')}</section>\n`;
  const parts = [head, kpis, '<h2>Trend</h2>', chart(rand, 120), '\n<h2>Summary</h2>\n'];
  for (let p = 0; p < 6; p++) parts.push(`<p>${sentence(rand, 60 + (rand() % 40))}.</p>\n`);
  const fixed = parts.join('').length + 4000;
  // The table takes what is left (about 190 bytes a row), then the script's data and the footer.
  parts.push('<h2>Accounts</h2>\n', table(rand, Math.max(5, Math.floor((bytes - fixed) / 190))));
  parts.push(`\n${script(rand, 300)}\n<footer>Generated ${sentence(rand, 4)}.</footer>\n</body>\n</html>\n`);
  return parts.join('');
}
