// Preloaded into the benchmarked service (`node --import tsx --import <this file>`): moves its clock
// by BENCH_CLOCK_OFFSET_MS so "now" is the instant the generated data is relative to (BENCH_NOW),
// whenever the cached data file was made. Only Date.now moves; timers and the event loop do not.
// (Not a GPUCAP_* variable: the service rejects settings it does not know.)
const offset = Number(process.env['BENCH_CLOCK_OFFSET_MS'] ?? '0');
if (Number.isFinite(offset) && offset !== 0) {
  const realNow = Date.now.bind(Date);
  Date.now = () => realNow() + offset;
}
