/**
 * Small statistics for the benchmark: nearest-rank percentiles over raw samples (no interpolation,
 * so p99 of 500 samples is the 5th-worst sample, a value that really happened).
 */

export type Summary = { samples: number; p50Ms: number; p99Ms: number; minMs: number; maxMs: number; meanMs: number };

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error("percentile of no samples");
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    samples: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    minMs: round(sorted[0]!),
    maxMs: round(sorted[sorted.length - 1]!),
    meanMs: round(sum / sorted.length),
  };
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** Three significant decimals are plenty for milliseconds and ratios. */
export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function ratio(a: number, b: number): number {
  return b > 0 ? round(a / b, 2) : Number.POSITIVE_INFINITY;
}
