#!/usr/bin/env node
// kubectl gpucap: the plugin's executable (kubectl runs `kubectl-gpucap` found on PATH). Wires the
// process to run(): its arguments, environment, streams, clock, Ctrl-C and the port-forward.
import { openServicePortForward } from '../../k8s/service-port-forward.js';
import { run } from './run.js';

const abort = new AbortController();
process.once('SIGINT', () => abort.abort());
process.once('SIGTERM', () => abort.abort());

// No top-level await: the one-file build is CommonJS, which any Node runs whatever the file's name.
void run(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  now: () => Date.now(),
  connect: (options) => openServicePortForward(options),
  signal: abort.signal,
}).then((code) => {
  process.exitCode = code;
});
