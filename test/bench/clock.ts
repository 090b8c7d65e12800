/**
 * The benchmark's one clock: CLOCK_MONOTONIC through process.hrtime, in milliseconds. On Linux it
 * is the same clock in every process of the machine, so a timestamp the server process takes when
 * the fake Gateway emits and one the load client takes when the tab receives are directly
 * comparable (unlike Date.now() or performance.timeOrigin + performance.now()).
 */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
