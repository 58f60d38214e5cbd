// `npm run test:bench-smoke`: the benchmarks' smoke run, a leg of its own (scripts/test-legs.mjs).
import { mochaConfig } from './scripts/test-legs.mjs';

export default mochaConfig('bench');
