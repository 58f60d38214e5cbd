// `npm run test:node24` (under Node 24, through scripts/with-node24.sh): the files that use what can
// differ between runtimes in the test's own process (scripts/test-legs.mjs).
import { mochaConfig } from './scripts/test-legs.mjs';

export default mochaConfig('node24');
