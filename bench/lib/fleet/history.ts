// The fleet's history for the fleet benchmark: per node and clock hour, the GPU time of each state
// (schema v14's fleet_hours and fleet_days), written through the store's own writer
// (writeFleetLedger, as a cluster's writer adds its closed hours) a UTC day and a cluster per call, each
// call moving the cluster's mark. The same (shape, FLEET_HISTORY_VERSION, schema) always gives the same
// rows, so the file is cached beside the workload indexes (bench/.cache/) and reused.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DAY_MS, HOUR_MS, type FleetHourRow } from '../../../src/domain/fleet-ledger.js';
import { openDatabase, sqliteWriter } from '../../../src/store/tooling.js';
import { mulberry32 } from '../../../sim/random.js';
import { CACHE_DIR, schemaDigest } from '../../data/generate-workloads.js';
import { migrateToServiceSchema } from '../store/service-schema.js';
import { CLUSTER_IDS, FLEET_NOW, FLEET_SEED, GPUS_PER_NODE, ORGANIZATION, fleetNodes, type FleetNode, type FleetShape } from './layout.js';

/** Bump when the distributions or the row shape change: a cached file of another version is regenerated. */
export const FLEET_HISTORY_VERSION = 1;

export interface FleetHistoryInfo {
  version: number;
  schemaDigest: string;
  seed: number;
  fleetNow: string;
  shape: FleetShape;
  /** [from, to) of the history, ISO. */
  from: string;
  to: string;
  fleetHoursRows: number;
  fleetDaysRows: number;
  fileBytes: number;
  /** writeFleetLedger calls (a UTC day of one cluster each). */
  writes: number;
  generatedAt: string;
  /** Seconds in the store's writer, and in the whole generation (rows made, checkpoint, service schema). */
  writeSeconds: number;
  generationSeconds: number;
  hourRowsPerSecond: number;
  /** GPU-hours of the whole history by state. */
  gpuHours: { capacity: number; unavailable: number; allocated: number; idle: number };
}

export interface FleetHistory {
  path: string;
  info: FleetHistoryInfo;
  cached: boolean;
}

function cachedPath(shape: FleetShape): string {
  return join(CACHE_DIR, `fleet-g${FLEET_HISTORY_VERSION}-s${schemaDigest()}-n${shape.nodes}-d${shape.days}-c${shape.clusters}.db`);
}

/** The cached history of `shape`, generated first when missing, stale or `force`d. */
export async function ensureFleetHistory(
  shape: FleetShape,
  options: { force?: boolean; log?: (line: string) => void } = {},
): Promise<FleetHistory> {
  const log = options.log ?? (() => undefined);
  const path = cachedPath(shape);
  const metaPath = `${path}.json`;
  if (options.force !== true && existsSync(path) && existsSync(metaPath)) {
    const info = JSON.parse(readFileSync(metaPath, 'utf8')) as FleetHistoryInfo;
    if (info.version === FLEET_HISTORY_VERSION && info.schemaDigest === schemaDigest() && statSync(path).size === info.fileBytes) {
      log(`fleet history ${shape.nodes.toLocaleString('en-US')} nodes × ${shape.days} days: cached ${path} ` +
        `(generated ${info.generatedAt} in ${info.generationSeconds.toFixed(1)} s)`);
      return { path, info, cached: true };
    }
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  removeStale(shape, path, log);
  log(`fleet history ${shape.nodes.toLocaleString('en-US')} nodes × ${shape.days} days: generating ${path}`);
  const info = await writeFleetHistory(shape, path, log);
  writeFileSync(metaPath, `${JSON.stringify(info, null, 2)}\n`);
  return { path, info, cached: false };
}

function removeStale(shape: FleetShape, keep: string, log: (line: string) => void): void {
  for (const name of readdirSync(CACHE_DIR)) {
    const path = join(CACHE_DIR, name);
    if (new RegExp(`^fleet-.*-n${shape.nodes}-d${shape.days}-c${shape.clusters}\\.db`).test(name) && !path.startsWith(keep)) {
      rmSync(path, { force: true });
      log(`  removed stale ${path}`);
    }
  }
}

/** Per node, what carries over from one hour to the next: an outage (cordoned or not ready) and its hours left. */
interface NodeHistory {
  node: FleetNode;
  outageHoursLeft: number;
  /** The share of its allocated GPU time that is idle, its own. */
  idleShare: number;
}

/**
 * One node's hour. Allocation follows the day (busiest in the European afternoon), dips at weekends
 * and varies by node; an outage (2% of node-days, 2–12 hours) keeps a third of the pods and makes the
 * rest unavailable; an unhealthy GPU is unavailable whenever it is not allocated.
 */
function hourOf(state: NodeHistory, hour: number, random: () => number): FleetHourRow {
  const { node } = state;
  if (state.outageHoursLeft === 0 && random() < 0.02 / 24) state.outageHoursLeft = 2 + Math.floor(random() * 11);
  const hourOfDay = (hour % DAY_MS) / HOUR_MS;
  const weekday = new Date(hour).getUTCDay();
  const weekend = weekday === 0 || weekday === 6 ? -0.12 : 0;
  const level = node.load + 0.12 * Math.sin((2 * Math.PI * (hourOfDay - 9)) / 24) + weekend + (random() - 0.5) * 0.3;
  const healthy = GPUS_PER_NODE - node.unhealthyGpus;
  let allocated = Math.min(healthy, Math.max(0, Math.round(level * GPUS_PER_NODE * 4) / 4));
  let unavailable = node.unhealthyGpus;
  if (state.outageHoursLeft > 0) {
    state.outageHoursLeft -= 1;
    allocated = Math.round((allocated / 3) * 4) / 4;
    unavailable = GPUS_PER_NODE - allocated;
  }
  return {
    clusterId: node.clusterId,
    node: node.name,
    hour,
    organizationId: ORGANIZATION,
    gpuModel: node.gpuModel,
    instanceType: node.instanceType,
    capacityType: null,
    capacityMs: GPUS_PER_NODE * HOUR_MS,
    unavailableMs: unavailable * HOUR_MS,
    allocatedMs: allocated * HOUR_MS,
    idleMs: Math.round(allocated * state.idleShare * HOUR_MS),
  };
}

async function writeFleetHistory(shape: FleetShape, path: string, log: (line: string) => void): Promise<FleetHistoryInfo> {
  const began = performance.now();
  const temporary = `${path}.partial`;
  for (const suffix of ['', '-wal', '-shm']) rmSync(temporary + suffix, { force: true });
  const random = mulberry32(FLEET_SEED ^ 0x5eed);
  const states: NodeHistory[] = fleetNodes(shape).map((node) => ({ node, outageHoursLeft: 0, idleShare: 0.08 + random() * 0.25 }));
  const from = FLEET_NOW - shape.days * DAY_MS;
  // The store's open (settings, schema), then its writer: what a cluster's writer does, a day at a time.
  const db = openDatabase(temporary, { servesReads: false });
  const writer = sqliteWriter(db, { clock: { now: () => FLEET_NOW } });
  const marks = new Map<string, number | null>();
  const sums = { capacity: 0, unavailable: 0, allocated: 0, idle: 0 };
  let writeMs = 0;
  let hourRows = 0;
  let writes = 0;
  try {
    for (let start = from; start < FLEET_NOW; ) {
      const end = Math.min(FLEET_NOW, (Math.floor(start / DAY_MS) + 1) * DAY_MS);
      for (const clusterId of CLUSTER_IDS.slice(0, shape.clusters)) {
        const hours: FleetHourRow[] = [];
        for (const state of states) {
          if (state.node.clusterId !== clusterId) continue;
          for (let hour = start; hour < end; hour += HOUR_MS) hours.push(hourOf(state, hour, random));
        }
        for (const row of hours) {
          sums.capacity += row.capacityMs;
          sums.unavailable += row.unavailableMs;
          sums.allocated += row.allocatedMs;
          sums.idle += row.idleMs;
        }
        const at = performance.now();
        hourRows += await writer.writeFleetLedger({ clusterId, expectedMark: marks.get(clusterId) ?? null, to: end, hours });
        writeMs += performance.now() - at;
        writes += 1;
        marks.set(clusterId, end);
      }
      if (new Date(end).getUTCDate() % 10 === 0 || end === FLEET_NOW) {
        const rate = Math.round(hourRows / (writeMs / 1000)).toLocaleString('en-US');
        log(`  up to ${new Date(end).toISOString()}: ${hourRows.toLocaleString('en-US')} hour rows, ${rate} rows/s in the writer`);
      }
      start = end;
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  // The service's own open: it then needs no migration of its copy.
  await migrateToServiceSchema({ kind: 'sqlite', path: temporary }, { now: FLEET_NOW });
  const counted = countRows(temporary);
  for (const suffix of ['-wal', '-shm']) rmSync(temporary + suffix, { force: true });
  renameSync(temporary, path);
  const gpuHours = (ms: number) => Math.round(ms / HOUR_MS);
  const generationSeconds = (performance.now() - began) / 1000;
  log(`  generated in ${generationSeconds.toFixed(1)} s (${(writeMs / 1000).toFixed(1)} s in the writer): ` +
    `${counted.hours.toLocaleString('en-US')} hour rows, ${counted.days.toLocaleString('en-US')} day rows, ` +
    `${(statSync(path).size / 1024 ** 2).toFixed(1)} MiB`);
  return {
    version: FLEET_HISTORY_VERSION,
    schemaDigest: schemaDigest(),
    seed: FLEET_SEED,
    fleetNow: new Date(FLEET_NOW).toISOString(),
    shape,
    from: new Date(from).toISOString(),
    to: new Date(FLEET_NOW).toISOString(),
    fleetHoursRows: counted.hours,
    fleetDaysRows: counted.days,
    fileBytes: statSync(path).size,
    writes,
    generatedAt: new Date().toISOString(),
    writeSeconds: Math.round(writeMs) / 1000,
    generationSeconds: Math.round(generationSeconds * 100) / 100,
    hourRowsPerSecond: Math.round(hourRows / (writeMs / 1000)),
    gpuHours: {
      capacity: gpuHours(sums.capacity),
      unavailable: gpuHours(sums.unavailable),
      allocated: gpuHours(sums.allocated),
      idle: gpuHours(sums.idle),
    },
  };
}

function countRows(path: string): { hours: number; days: number } {
  const db = openDatabase(path, { readonly: true, servesReads: false });
  try {
    const count = (table: string) => Number(db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get());
    return { hours: count('fleet_hours'), days: count('fleet_days') };
  } finally {
    db.close();
  }
}
