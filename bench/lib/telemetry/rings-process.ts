// Runs the rings part of the telemetry benchmark in a process of its own (rings.ts): its RSS
// delta is then the fleet's alone, and the 440 MB it allocates and frees at 10,000 GPUs is not left
// behind for the parts after it (a sampler tick run right after it in the same process took three
// times longer and timed out scrapes). Settings come in argv, log lines go to stderr, the result is
// the one line on stdout.
import { measureRings } from './rings.js';

const [gpus, intervalSeconds] = process.argv.slice(2).map(Number);
if (gpus === undefined || intervalSeconds === undefined || !(gpus > 0) || !(intervalSeconds > 0)) {
  console.error('usage: rings-process.ts <gpus> <interval seconds>');
  process.exit(2);
}
const result = measureRings({ gpus, intervalSeconds }, (line) => console.error(line));
process.stdout.write(`${JSON.stringify(result)}\n`);
