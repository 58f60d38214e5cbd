// The web console built as `npm run build` builds it, once per test process, into a temp folder that
// is removed at exit. Tests serve it with GPUCAP_CONSOLE_ASSETS_DIR.
import { buildConsole, type BuiltConsole } from '../../console/build.mjs';
import { cleanUpOnExit } from './exit-cleanup.js';
import { makeTempDir } from './temp-dir.js';

let built: Promise<BuiltConsole> | undefined;

export function builtConsole(): Promise<BuiltConsole> {
  built ??= (async () => {
    const dir = makeTempDir('gpucap-console-');
    cleanUpOnExit(`console build ${dir.path}`, () => dir.remove());
    return buildConsole({ outDir: dir.path });
  })();
  return built;
}
