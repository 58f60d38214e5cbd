// `npm run test:postgres`: the suite's backend-dependent files (scripts/backend-dependent-tests.mjs)
// with the index on PostgreSQL. PostgreSQL's own suites (test/ha/, test/store/postgres/) use their
// own databases whatever the switch says, and `npm test` runs them already (scripts/test-legs.mjs).
import { mochaConfig } from './scripts/test-legs.mjs';

export default mochaConfig('postgres', { timeout: 60_000 });
