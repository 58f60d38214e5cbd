// Types of console/build.mjs, for the demo, the tests and the screenshot script that import it.
export interface BuiltFile {
  name: string;
  bytes: number;
  gzipBytes: number;
}

export interface BuiltConsole {
  outDir: string;
  files: BuiltFile[];
  totalBytes: number;
  totalGzipBytes: number;
  seconds: number;
}

export const SIZE_BUDGET_BYTES: number;
export function buildConsole(options: { outDir: string }): Promise<BuiltConsole>;
export function sizeReport(built: BuiltConsole): string;
