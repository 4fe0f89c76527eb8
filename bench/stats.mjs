// The statistics both benchmarks report (bench/node/bench.mjs, bench/browser/bench.mjs):
// medians of ns/key over the runs, and table cells "median (min-max)".

/** The median of `values` (numbers). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** ns as printed: whole above 100, one decimal below. */
export function fmt(ns) {
  return ns >= 100 ? ns.toFixed(0) : ns.toFixed(1);
}

/** A table cell for the ns/key of the runs: "median (min-max)". */
export function cell(values) {
  return `${fmt(median(values))} (${fmt(Math.min(...values))}-${fmt(Math.max(...values))})`;
}
