/** Two hand-written SVG charts for the report (no plotting dependency): grouped bars, and log-log lines. */

const COLORS = ["#2563eb", "#16a34a", "#ea580c", "#9333ea", "#6b7280", "#dc2626"];
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function frame(width: number, height: number, title: string, body: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    `font-family="system-ui, sans-serif" font-size="12">\n<rect width="100%" height="100%" fill="#fff"/>\n` +
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="600">${esc(title)}</text>\n${body}</svg>\n`
  );
}

function legend(names: string[], x: number, y: number, colors: (string | undefined)[] = []): string {
  return names
    .map(
      (n, i) =>
        `<rect x="${x}" y="${y + i * 18}" width="12" height="12" fill="${colors[i] ?? COLORS[i % COLORS.length]}"/>` +
        `<text x="${x + 18}" y="${y + i * 18 + 10}">${esc(n)}</text>`,
    )
    .join("\n");
}

export interface BarSeries {
  name: string;
  values: (number | null)[];
}

/** Bars per group (e.g. per budget), one colour per series, values labelled; y from 0 to yMax. */
export function groupedBars(o: {
  title: string;
  groups: string[];
  series: BarSeries[];
  yMax: number;
  yLabel: string;
  format?: (v: number) => string;
}): string {
  const fmt = o.format ?? ((v: number) => v.toFixed(2));
  const left = 50;
  const top = 35;
  const plotH = 220;
  const bar = 22;
  const groupW = o.series.length * bar + 30;
  const plotW = o.groups.length * groupW;
  const legendW = 30 + Math.max(...o.series.map((s) => s.name.length)) * 7.5;
  const width = left + plotW + 20 + legendW;
  const height = top + plotH + 40;
  const y = (v: number) => top + plotH - (Math.min(v, o.yMax) / o.yMax) * plotH;
  const parts: string[] = [];
  for (let t = 0; t <= 4; t++) {
    const v = (o.yMax * t) / 4;
    parts.push(
      `<line x1="${left}" x2="${left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e7eb"/>` +
        `<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end" fill="#6b7280">${fmt(v)}</text>`,
    );
  }
  o.groups.forEach((g, gi) => {
    const gx = left + gi * groupW + 15;
    o.series.forEach((s, si) => {
      const v = s.values[gi];
      if (v === null || v === undefined) return;
      const x = gx + si * bar;
      parts.push(
        `<rect x="${x}" y="${y(v)}" width="${bar - 3}" height="${top + plotH - y(v)}" fill="${COLORS[si % COLORS.length]}"/>` +
          `<text x="${x + (bar - 3) / 2}" y="${y(v) - 3}" text-anchor="middle" font-size="9">${fmt(v)}</text>`,
      );
    });
    parts.push(
      `<text x="${gx + (o.series.length * bar) / 2}" y="${top + plotH + 16}" text-anchor="middle">${esc(g)}</text>`,
    );
  });
  parts.push(
    `<text x="14" y="${top + plotH / 2}" transform="rotate(-90 14 ${top + plotH / 2})" text-anchor="middle" fill="#374151">${esc(o.yLabel)}</text>`,
  );
  parts.push(
    legend(
      o.series.map((s) => s.name),
      left + plotW + 20,
      top + 10,
    ),
  );
  return frame(width, height, o.title, parts.join("\n"));
}

export interface LineSeries {
  name: string;
  /** Fixed colour, so that a series keeps it across charts. */
  color?: string;
  points: { x: number; y: number | null }[];
}

const niceLog = (lo: number, hi: number) => {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
};

/** Lines on log-log axes (cost against size): a straight line of slope k is cost ~ n^k. */
export function logLogLines(o: {
  title: string;
  series: LineSeries[];
  xLabel: string;
  yLabel: string;
}): string {
  const pts = o.series.flatMap((s) => s.points.filter((p) => p.y !== null && p.y > 0)) as {
    x: number;
    y: number;
  }[];
  const left = 60;
  const top = 35;
  const plotW = 380;
  const plotH = 240;
  const legendW = 30 + Math.max(...o.series.map((s) => s.name.length)) * 7.5;
  const width = left + plotW + 20 + legendW;
  const height = top + plotH + 45;
  if (pts.length === 0)
    return frame(width, height, o.title, `<text x="${left}" y="${top + 20}">no data</text>`);
  const xs = niceLog(Math.min(...pts.map((p) => p.x)), Math.max(...pts.map((p) => p.x)));
  const ys = niceLog(Math.min(...pts.map((p) => p.y)), Math.max(...pts.map((p) => p.y)));
  const [x0, x1] = [Math.log10(xs[0]!), Math.log10(xs[xs.length - 1]!)];
  const [y0, y1] = [Math.log10(ys[0]!), Math.log10(ys[ys.length - 1]!)];
  const X = (v: number) => left + ((Math.log10(v) - x0) / (x1 - x0 || 1)) * plotW;
  const Y = (v: number) => top + plotH - ((Math.log10(v) - y0) / (y1 - y0 || 1)) * plotH;
  const label = (v: number) => (v >= 1000 ? `${v / 1000}k` : String(v));
  const parts: string[] = [];
  for (const v of xs)
    parts.push(
      `<line x1="${X(v)}" x2="${X(v)}" y1="${top}" y2="${top + plotH}" stroke="#e5e7eb"/>` +
        `<text x="${X(v)}" y="${top + plotH + 16}" text-anchor="middle" fill="#6b7280">${label(v)}</text>`,
    );
  for (const v of ys)
    parts.push(
      `<line x1="${left}" x2="${left + plotW}" y1="${Y(v)}" y2="${Y(v)}" stroke="#e5e7eb"/>` +
        `<text x="${left - 6}" y="${Y(v) + 4}" text-anchor="end" fill="#6b7280">${label(v)}</text>`,
    );
  o.series.forEach((s, i) => {
    const ok = s.points.filter((p) => p.y !== null && p.y > 0) as { x: number; y: number }[];
    const c = s.color ?? COLORS[i % COLORS.length];
    if (ok.length > 1)
      parts.push(
        `<polyline fill="none" stroke="${c}" stroke-width="2" points="${ok.map((p) => `${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join(" ")}"/>`,
      );
    for (const p of ok)
      parts.push(`<circle cx="${X(p.x).toFixed(1)}" cy="${Y(p.y).toFixed(1)}" r="3.5" fill="${c}"/>`);
  });
  parts.push(
    `<text x="${left + plotW / 2}" y="${top + plotH + 36}" text-anchor="middle" fill="#374151">${esc(o.xLabel)}</text>`,
  );
  parts.push(
    `<text x="16" y="${top + plotH / 2}" transform="rotate(-90 16 ${top + plotH / 2})" text-anchor="middle" fill="#374151">${esc(o.yLabel)}</text>`,
  );
  parts.push(
    legend(
      o.series.map((s) => s.name),
      left + plotW + 20,
      top + 10,
      o.series.map((s) => s.color),
    ),
  );
  return frame(width, height, o.title, parts.join("\n"));
}
