// `npm run test:postgres`: the suite's backend-dependent files (scripts/backend-dependent-tests.mjs)
// with the index on PostgreSQL. PostgreSQL's own suites (test/ha/, test/store/postgres-*) use their
// own databases whatever the switch says, and `npm test` runs them already.
import { readFileSync } from 'node:fs';
import { URL } from 'node:url';
import { backendDependentTests } from './scripts/backend-dependent-tests.mjs';

const base = JSON.parse(readFileSync(new URL('./.mocharc.json', import.meta.url), 'utf8'));

export default {
  ...base,
  spec: backendDependentTests().filter((file) => !file.startsWith('test/ha/') && !/^test\/store\/postgres-[^/]*\.test\.ts$/.test(file)),
  timeout: 60_000,
};
