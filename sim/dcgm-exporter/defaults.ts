// Plausible field values for a GPU or MIG instance that a test did not set. Derived from a seed
// (the GPU uuid, plus the instance id for MIG) by hashing, never from a random source, so a scrape
// returns the same numbers every time until a test changes them. Given values win, and the defaults
// that depend on them follow: setting GPU_UTIL moves the PROF ratios, setting FB_USED moves FB_FREE.
import type { DcgmField, FieldValues } from './types.js';

export type FieldValue = number | 'blank';

/** An H100 80GB reports 81559 MiB of framebuffer in FB_USED + FB_FREE. */
export const DEVICE_FB_TOTAL_MIB = 81559;

/** Every field with a value or an explicit `undefined` (omitted from the output). */
export type ResolvedValues = Record<DcgmField, FieldValue | undefined>;

/** The fields a MIG GPU instance reports (see `perInstance` in fields.ts). */
export type InstanceField =
  | 'DCGM_FI_DEV_XID_ERRORS'
  | 'DCGM_FI_DEV_FB_FREE'
  | 'DCGM_FI_DEV_FB_USED'
  | 'DCGM_FI_PROF_GR_ENGINE_ACTIVE'
  | 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE'
  | 'DCGM_FI_PROF_DRAM_ACTIVE';

/**
 * Defaults for a whole GPU, overlaid with `given`. NVML reports no utilisation for a MIG-enabled GPU,
 * so with `migEnabled` GPU_UTIL and MEM_COPY_UTIL are absent unless given (as in the A100 capture).
 */
export function deviceValues(seed: string, given: FieldValues, options: { migEnabled?: boolean } = {}): ResolvedValues {
  const unit = (salt: string): number => hashUnit(`${seed}:${salt}`);
  const pick = pickFrom(given);
  const utilDefault = Math.floor(unit('util') * 101);
  const util = pick('DCGM_FI_DEV_GPU_UTIL', options.migEnabled === true ? undefined : utilDefault);
  const busy = numberOr(util, utilDefault) / 100;
  const temp = pick('DCGM_FI_DEV_GPU_TEMP', 30 + Math.floor(unit('temp') * 51));
  return {
    DCGM_FI_DEV_SM_CLOCK: pick('DCGM_FI_DEV_SM_CLOCK', busy > 0 ? 1410 + Math.floor(unit('sm') * 571) : 345),
    DCGM_FI_DEV_MEM_CLOCK: pick('DCGM_FI_DEV_MEM_CLOCK', 2619),
    DCGM_FI_DEV_MEMORY_TEMP: pick('DCGM_FI_DEV_MEMORY_TEMP', numberOr(temp, 50) + 3 + Math.floor(unit('memtemp') * 8)),
    DCGM_FI_DEV_GPU_TEMP: temp,
    // Milliwatt resolution, as NVML reports it: prints like the fixtures' `409.692000`.
    DCGM_FI_DEV_POWER_USAGE: pick('DCGM_FI_DEV_POWER_USAGE', Math.round((60 + unit('power') * 640) * 1000) / 1000),
    DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION: pick('DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', 100_000_000 + Math.floor(unit('energy') * 900_000_000)),
    DCGM_FI_DEV_PCIE_REPLAY_COUNTER: pick('DCGM_FI_DEV_PCIE_REPLAY_COUNTER', 0),
    DCGM_FI_DEV_GPU_UTIL: util,
    DCGM_FI_DEV_MEM_COPY_UTIL: pick(
      'DCGM_FI_DEV_MEM_COPY_UTIL',
      options.migEnabled === true ? undefined : Math.round(busy * 100 * (0.2 + unit('copy') * 0.6)),
    ),
    ...sharedValues(seed, given, { fbTotalMib: DEVICE_FB_TOTAL_MIB, busy }),
  };
}

/** Defaults for a MIG instance (seed it with uuid and instance id); values for device-only fields are ignored. */
export function instanceValues(seed: string, given: FieldValues, options: { profile: string }): Pick<ResolvedValues, InstanceField> {
  return sharedValues(seed, given, { fbTotalMib: migFbTotalMib(options.profile), busy: hashUnit(`${seed}:busy`) });
}

function sharedValues(seed: string, given: FieldValues, options: { fbTotalMib: number; busy: number }): Pick<ResolvedValues, InstanceField> {
  const unit = (salt: string): number => hashUnit(`${seed}:${salt}`);
  const pick = pickFrom(given);
  const total = options.fbTotalMib;
  const givenFree = given.DCGM_FI_DEV_FB_FREE;
  const usedDefault = typeof givenFree === 'number' ? Math.max(0, total - givenFree) : Math.round(total * unit('fb'));
  const used = pick('DCGM_FI_DEV_FB_USED', usedDefault);
  const free = pick('DCGM_FI_DEV_FB_FREE', Math.max(0, total - numberOr(used, usedDefault)));
  const gr = pick('DCGM_FI_PROF_GR_ENGINE_ACTIVE', round6(options.busy * (0.9 + unit('gr') * 0.1)));
  const grNumber = numberOr(gr, options.busy);
  return {
    DCGM_FI_DEV_XID_ERRORS: pick('DCGM_FI_DEV_XID_ERRORS', 0),
    DCGM_FI_DEV_FB_FREE: free,
    DCGM_FI_DEV_FB_USED: used,
    DCGM_FI_PROF_GR_ENGINE_ACTIVE: gr,
    DCGM_FI_PROF_PIPE_TENSOR_ACTIVE: pick('DCGM_FI_PROF_PIPE_TENSOR_ACTIVE', round6(grNumber * (0.5 + unit('tensor') * 0.45))),
    DCGM_FI_PROF_DRAM_ACTIVE: pick('DCGM_FI_PROF_DRAM_ACTIVE', round6(grNumber * (0.3 + unit('dram') * 0.5))),
  };
}

/**
 * Framebuffer of a MIG instance from its profile's memory size: `1g.5gb` reports 4864 MiB and
 * `1g.10gb` 9728 MiB on A100s, i.e. 95 % of the nominal GiB.
 */
export function migFbTotalMib(profile: string): number {
  const match = /\.(\d+)gb$/.exec(profile);
  const gib = match?.[1] === undefined ? 10 : Number(match[1]);
  return Math.round(gib * 1024 * 0.95);
}

/** A given value wins, including an explicit `undefined` (the field is omitted); an absent key gets the default. */
function pickFrom(given: FieldValues): (field: DcgmField, fallback: number | undefined) => FieldValue | undefined {
  return (field, fallback) => (field in given ? given[field] : fallback);
}

function numberOr(value: FieldValue | undefined, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** FNV-1a over the string, mapped to [0, 1). Stable across runs and platforms. */
function hashUnit(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) / 0x1_0000_0000;
}
