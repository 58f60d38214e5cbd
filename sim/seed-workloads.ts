// A deterministic sample of GPU workloads relative to `now`, for the demo until it runs against the
// simulated cluster: three organizations, several initiatives, two instance types, every status.
import type { PodGpuInterval, WorkloadRecord, WorkloadStatus } from '../src/domain/workload.js';

const ORGS: Record<string, string[]> = {
  acme: ['llm', 'vision', 'speech'],
  globex: ['recsys', 'forecast'],
  initech: ['research'],
};
const USERS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'];
const INSTANCE_TYPES = ['p5.48xlarge', 'g6e.12xlarge'];
const HOUR = 3_600_000;

/** mulberry32: a tiny seeded PRNG, so every demo run shows the same data. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seedWorkloads(count: number, now: number): { workloads: WorkloadRecord[]; pods: PodGpuInterval[] } {
  const rand = random(42);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const workloads: WorkloadRecord[] = [];
  const pods: PodGpuInterval[] = [];
  for (let i = 0; i < count; i += 1) {
    const organizationId = pick(Object.keys(ORGS));
    const initiativeId = pick(ORGS[organizationId] ?? []);
    const submittedAt = Math.floor(now - rand() * 45 * 24 * HOUR);
    const age = now - submittedAt;
    const roll = rand();
    const status: WorkloadStatus = age < 2 * HOUR && roll < 0.5 ? (roll < 0.1 ? 'pending' : 'running') : roll < 0.75 ? 'completed' : roll < 0.9 ? 'failed' : 'cancelled';
    const startedAt = status === 'pending' ? null : submittedAt + Math.floor(rand() * 10 * 60_000);
    const runFor = Math.floor((0.2 + rand() * 12) * HOUR);
    const completedAt = status === 'pending' || status === 'running' || startedAt === null ? null : Math.min(now, startedAt + runFor);
    const gpuCount = pick([1, 2, 4, 8, 8, 16]);
    const workloadId = `demo-${String(i).padStart(5, '0')}-${Math.floor(rand() * 1e9).toString(16)}`;
    workloads.push({
      workloadId,
      organizationId,
      clusterId: i % 3 === 0 ? 'gpu-west' : 'gpu-east',
      namespace: `${initiativeId}-jobs`,
      name: `${initiativeId}-${pick(['train', 'eval', 'finetune', 'sweep'])}-${i}`,
      kind: rand() < 0.8 ? 'Job' : 'Pod',
      status,
      submittedBy: pick(USERS),
      initiativeId,
      instanceType: startedAt === null ? 'unknown' : pick(INSTANCE_TYPES),
      gpuCount,
      submittedAt,
      startedAt,
      completedAt,
      exitCode: status === 'completed' ? 0 : status === 'failed' ? pick([1, 137, 139]) : status === 'cancelled' ? 143 : null,
      isManaged: rand() < 0.7,
      resourceVersion: '1',
    });
    if (startedAt !== null) pods.push({ podUid: `${workloadId}-0`, workloadId, gpus: gpuCount, startedAt, finishedAt: completedAt });
  }
  return { workloads, pods };
}
