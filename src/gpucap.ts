#!/usr/bin/env node
// `gpucap`: commands for the operator of the service, beside it in the image
// (`node dist/src/gpucap.js <command>`; `npm run gpucap -- <command>` in a checkout). The commands are
// src/cli/gpucap.ts's.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { runGpucap } from './cli/gpucap.js';

function isMain(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isMain()) {
  const code = await runGpucap(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    clock: { now: () => Date.now() },
    stdin: async () => {
      let text = '';
      for await (const chunk of process.stdin) text += String(chunk);
      return text;
    },
  });
  process.exitCode = code;
}
