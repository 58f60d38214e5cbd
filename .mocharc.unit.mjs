// `npm run test:unit`: the files that start nothing beyond their own process (scripts/test-legs.mjs).
import { mochaConfig } from './scripts/test-legs.mjs';

export default mochaConfig('unit');
