/**
 * Test files of `repo` (default: this repository) that reach test/support/backend.ts through their
 * imports, relative to it, sorted. `graph`: their import graph (scripts/test-imports.mjs), when the
 * caller has it already.
 */
export function backendDependentTests(repo?: string, graph?: Map<string, unknown>): string[];
