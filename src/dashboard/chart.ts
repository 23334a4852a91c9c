/**
 * The oldest-pending-age chart as inline SVG: no chart library, no script. One polyline over
 * the samples (oldest left), a dot per sample (its age and time in a tooltip), the largest age
 * on the y axis and the time span under the x axis.
 */
import { duration, escapeHtml, isoTime } from './html';

export interface ChartPoint {
  /** Sample time, ms epoch. */
  readonly t: number;
  /** Oldest pending age, ms; 0 when nothing was pending. */
  readonly value: number;
}

const WIDTH = 560;
const HEIGHT = 140;
const PAD = { left: 56, right: 10, top: 10, bottom: 22 };

export function ageChart(label: string, points: readonly ChartPoint[]): string {
  const open = `<svg class="chart" role="img" aria-label="${escapeHtml(label)}" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" xmlns="http://www.w3.org/2000/svg">`;
  const frameRect = `<rect x="${PAD.left}" y="${PAD.top}" width="${WIDTH - PAD.left - PAD.right}" height="${HEIGHT - PAD.top - PAD.bottom}" fill="#fff" stroke="#d5d9e0"/>`;
  if (points.length === 0) {
    return `${open}${frameRect}<text x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle">no samples yet: a poll run records one</text></svg>`;
  }
  const sorted = [...points].sort((a, b) => a.t - b.t);
  const first = sorted[0]!.t;
  const span = Math.max(1, sorted.at(-1)!.t - first);
  const top = Math.max(1000, ...sorted.map((p) => p.value));
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const x = (t: number) => (sorted.length === 1 ? PAD.left + plotWidth : PAD.left + ((t - first) / span) * plotWidth).toFixed(1);
  const y = (v: number) => (PAD.top + plotHeight - (v / top) * plotHeight).toFixed(1);
  const line = sorted.map((p) => `${x(p.t)},${y(p.value)}`).join(' ');
  const dots = sorted
    .map((p) => `<circle class="point" cx="${x(p.t)}" cy="${y(p.value)}" r="2.5" fill="#2f6fdf"><title>${isoTime(p.t)}: ${duration(p.value)}</title></circle>`)
    .join('');
  const axes =
    `<text x="${PAD.left - 4}" y="${PAD.top + 9}" text-anchor="end">${duration(top)}</text>` +
    `<text x="${PAD.left - 4}" y="${PAD.top + plotHeight}" text-anchor="end">0</text>` +
    `<text x="${PAD.left}" y="${HEIGHT - 6}">${escapeHtml(isoTime(first).slice(11, 16))} UTC</text>` +
    `<text x="${WIDTH - PAD.right}" y="${HEIGHT - 6}" text-anchor="end">last ${duration(span)}</text>`;
  return `${open}${frameRect}${axes}<polyline fill="none" stroke="#2f6fdf" stroke-width="1.5" points="${line}"/>${dots}</svg>`;
}
