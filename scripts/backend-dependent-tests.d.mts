/** Test files of `repo` (default: this repository) that reach test/support/backend.ts through their imports, relative to it, sorted. */
export function backendDependentTests(repo?: string): string[];
