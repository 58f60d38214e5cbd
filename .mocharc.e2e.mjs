// `npm run test:e2e`: the files that start the service in their process, a child process (the service,
// a CLI, PostgreSQL, a kube-apiserver, helm...) or Chromium (scripts/test-legs.mjs).
import { mochaConfig } from './scripts/test-legs.mjs';

export default mochaConfig('e2e');
