// Preloaded into the benchmarked service (with --expose-gc) when a benchmark asks for the memory the
// service *retains*: RSS includes garbage not yet collected and pages V8 keeps after a peak, so
// "retained per pod" needs a collection first. On SIGUSR2 it collects twice (the second pass frees what
// the first one's finalizers released) and writes process.memoryUsage() to BENCH_HEAP_FILE. Not a GPUCAP_*
// variable, since the service rejects settings it does not know.
import { writeFileSync } from 'node:fs';

const file = process.env['BENCH_HEAP_FILE'];
const collect = (globalThis as { gc?: () => void }).gc;
if (file !== undefined && collect !== undefined) {
  let sequence = 0;
  process.on('SIGUSR2', () => {
    collect();
    collect();
    sequence += 1;
    writeFileSync(file, JSON.stringify({ sequence, ...process.memoryUsage() }));
  });
}
