// A small accessible bar chart in SVG: one bar per day, a text summary for screen readers (the
// svg's label) and the same numbers as a table under "Show numbers" (keyboard reachable).
export interface Bar {
  label: string;
  value: number;
  /** Part of the value drawn in the error colour (e.g. failed sessions). */
  bad?: number;
}

const W = 100;
const H = 40;

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(1));

export function BarChart({ id, title, unit, bars, badLabel }: { id: string; title: string; unit: string; bars: Bar[]; badLabel?: string }) {
  const max = Math.max(0, ...bars.map((b) => b.value));
  const total = bars.reduce((s, b) => s + b.value, 0);
  const bad = bars.reduce((s, b) => s + (b.bad ?? 0), 0);
  const step = W / Math.max(1, bars.length);
  const gap = Math.min(0.6, step * 0.2);
  const first = bars[0]?.label ?? '';
  const last = bars[bars.length - 1]?.label ?? '';
  const summary = `${fmt(total)} ${unit} from ${first} to ${last}${badLabel && bad ? `, ${fmt(bad)} ${badLabel}` : ''}; busiest day ${fmt(max)}.`;
  return (
    <figure class="chart" data-testid={`chart-${id}`} aria-labelledby={`chart-${id}-title`}>
      <figcaption id={`chart-${id}-title`}>
        <strong>{title}</strong>{' '}
        <span class="chart-total" data-testid={`chart-${id}-total`}>
          {fmt(total)}
        </span>{' '}
        {unit}
        {badLabel && bad ? (
          <span class="chart-bad">
            {' '}
            ({fmt(bad)} {badLabel})
          </span>
        ) : null}
      </figcaption>
      {max === 0 ? (
        <p class="state empty chart-empty">
          No {unit} from {first} to {last}.
        </p>
      ) : (
        <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`${title}: ${summary}`}>
          <line x1="0" y1={H} x2={W} y2={H} class="axis" />
          {bars.map((b, i) => {
            const h = (b.value / max) * (H - 1);
            const hb = ((b.bad ?? 0) / max) * (H - 1);
            return (
              <g key={b.label}>
                <rect x={i * step + gap / 2} y={H - h} width={step - gap} height={h} class="bar">
                  <title>
                    {b.label}: {fmt(b.value)} {unit}
                    {badLabel && b.bad ? `, ${fmt(b.bad)} ${badLabel}` : ''}
                  </title>
                </rect>
                {hb > 0 ? <rect x={i * step + gap / 2} y={H - hb} width={step - gap} height={hb} class="bar bad" /> : null}
              </g>
            );
          })}
        </svg>
      )}
      {max > 0 ? (
        <div class="chart-scale" aria-hidden="true">
          <span>{first}</span>
          <span>max {fmt(max)}</span>
          <span>{last}</span>
        </div>
      ) : null}
      <details>
        <summary>Show numbers</summary>
        <table data-testid={`chart-${id}-table`}>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">{unit}</th>
              {badLabel ? <th scope="col">{badLabel}</th> : null}
            </tr>
          </thead>
          <tbody>
            {bars.map((b) => (
              <tr key={b.label}>
                <td>{b.label}</td>
                <td>{fmt(b.value)}</td>
                {badLabel ? <td>{fmt(b.bad ?? 0)}</td> : null}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
