export interface TestLegs {
  unit: string[];
  e2e: string[];
  bench: string[];
  node24: string[];
  postgres: string[];
  image: string[];
  cluster: string[];
}

/** Folders with a leg of their own (root, podman, a cluster): `npm test` leaves them out. */
export const SEPARATE_LEGS: { image: string; cluster: string };

/** Every leg's files of `repo` (default: this repository), relative to it, sorted. */
export function testLegs(repo?: string): TestLegs;

/** The legs, with the test files no leg runs and the files both unit and e2e would run. */
export function checkedLegs(repo?: string): { legs: TestLegs; inNoLeg: string[]; inUnitAndE2e: string[] };

/** A mocha config for `leg`: .mocharc.json's settings with the leg's files as its spec. */
export function mochaConfig(leg: keyof TestLegs, overrides?: Record<string, unknown>): Record<string, unknown> & { spec: string[] };
