// The demo's simulated world keeps the order of a real cluster for every Job and Pod, with any seed
// and through its churn: created, then started, then finished, none of it after the world's "now".
// The service reads submitted_at, started_at and completed_at from these timestamps, so a Job that
// started before it was submitted shows a negative queue time in the demo's answers. Its DRA objects
// are linked as a real cluster links them: pod to claim, claim to its pods' uids, results to devices.
// Its GPU nodes are Ready but three, which are out of service the ways real ones are (cordoned,
// NotReady, a failed GPU), and no Job runs on a GPU out of service, before or after churn.
import { expect } from 'chai';
import { L4_NODES } from '../../sim/demo/l4-pool.js';
import { CORDONED_NODE, NOT_READY_NODE, UNHEALTHY_GPU_NODE } from '../../sim/demo/node-faults.js';
import { startDemoWorld, type DemoWorld } from '../../sim/demo/world.js';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { makeTempDir } from '../support/temp-dir.js';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const STEP_MS = 5_000;
const SEEDS = [1, 7, 42, 1234, 99_999];

interface Condition {
  type: string;
  status: string;
  lastTransitionTime?: string;
}

interface ContainerState {
  running?: { startedAt?: string };
  terminated?: { startedAt?: string; finishedAt?: string };
}

/** The timestamps of one object, named, in the order they must keep; undefined where not reached. */
type Timeline = [label: string, time: string | undefined][];

function jobTimeline(job: KubeObject): Timeline {
  const status = (job.status ?? {}) as { startTime?: string; completionTime?: string; conditions?: Condition[] };
  const ends = (status.conditions ?? []).filter((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  return [
    ['creationTimestamp', job.metadata.creationTimestamp],
    ['status.startTime', status.startTime],
    ...ends.map((c): Timeline[number] => [`${c.type} condition`, c.lastTransitionTime]),
    ['status.completionTime', status.completionTime],
  ];
}

function podTimeline(pod: KubeObject): Timeline[] {
  const status = (pod.status ?? {}) as { startTime?: string; containerStatuses?: { name: string; state?: ContainerState }[] };
  const head: Timeline = [
    ['creationTimestamp', pod.metadata.creationTimestamp],
    ['status.startTime', status.startTime],
  ];
  const containers = (status.containerStatuses ?? []).map((container): Timeline => [
    ...head,
    [`${container.name} running since`, container.state?.running?.startedAt],
    [`${container.name} started`, container.state?.terminated?.startedAt],
    [`${container.name} finished`, container.state?.terminated?.finishedAt],
  ]);
  return containers.length > 0 ? containers : [head];
}

/** Each step of `timeline` that comes before the one reached just before it, or after `now`. */
function outOfOrder(what: string, timeline: Timeline, now: number): string[] {
  const problems: string[] = [];
  const reached = timeline.filter((entry): entry is [string, string] => entry[1] !== undefined);
  if (timeline[0]?.[1] === undefined) problems.push(`${what} has no creationTimestamp`);
  const startIndex = timeline.findIndex(([label]) => label === 'status.startTime');
  const finished = timeline.slice(startIndex + 1).some(([, time]) => time !== undefined);
  if (finished && timeline[startIndex]?.[1] === undefined) problems.push(`${what} finished without a status.startTime`);
  for (let i = 1; i < reached.length; i += 1) {
    const [earlierLabel, earlier] = reached[i - 1] as [string, string];
    const [label, time] = reached[i] as [string, string];
    if (Date.parse(time) < Date.parse(earlier)) problems.push(`${what}: ${label} ${time} is before ${earlierLabel} ${earlier}`);
  }
  for (const [label, time] of reached) if (Date.parse(time) > now) problems.push(`${what}: ${label} ${time} is after the world's now`);
  return problems;
}

/** Every ordering problem of every Job and Pod of every cluster, and how many objects were checked. */
interface ClaimSpec {
  devices?: { requests?: { name: string; exactly?: { deviceClassName?: string } }[] };
}

interface ClaimStatus {
  allocation?: { devices?: { results?: { request: string; driver: string; pool: string; device: string }[] }; nodeSelector?: unknown };
  reservedFor?: { resource: string; name: string; uid?: string }[];
}

interface DraPodSpec {
  nodeName?: string;
  resourceClaims?: { name: string; resourceClaimName?: string; resourceClaimTemplateName?: string }[];
  containers?: { resources?: { limits?: Record<string, string>; requests?: Record<string, string>; claims?: { name: string }[] } }[];
}

/** Every broken link between the home cluster's DRA objects, and how many claims and claiming pods there are. */
function checkDra(world: DemoWorld): { problems: string[]; claims: number; claimingPods: number } {
  const store = world.home.api.store;
  const problems: string[] = [];
  const devices = new Map<string, string>();
  for (const slice of store.list('resourceslices')) {
    const spec = slice.spec as { driver: string; nodeName: string; pool: { name: string }; devices: { name: string }[] };
    const node = store.get('nodes', { name: spec.nodeName });
    const owner = (slice.metadata.ownerReferences as { uid?: string }[] | undefined)?.[0];
    if (node === undefined || owner?.uid !== node.metadata.uid) problems.push(`slice ${slice.metadata.name}: not owned by its node ${spec.nodeName}`);
    for (const device of spec.devices) devices.set(`${spec.driver}/${spec.pool.name}/${device.name}`, spec.nodeName);
  }
  const held = new Map<string, string>();
  let claims = 0;
  for (const claim of store.list('resourceclaims')) {
    claims += 1;
    const what = `claim ${claim.metadata.namespace}/${claim.metadata.name}`;
    const spec = claim.spec as ClaimSpec;
    const status = claim.status as ClaimStatus;
    for (const request of spec.devices?.requests ?? []) {
      if (store.get('deviceclasses', { name: request.exactly?.deviceClassName ?? '' }) === undefined) problems.push(`${what}: no DeviceClass ${request.exactly?.deviceClassName}`);
    }
    const nodes = new Set<string>();
    for (const result of status.allocation?.devices?.results ?? []) {
      const key = `${result.driver}/${result.pool}/${result.device}`;
      const node = devices.get(key);
      if (node === undefined) problems.push(`${what}: device ${key} is in no slice`);
      else nodes.add(node);
      if (held.has(key)) problems.push(`${what}: device ${key} is also held by ${held.get(key)}`);
      held.set(key, what);
      if (!(spec.devices?.requests ?? []).some((r) => r.name === result.request)) problems.push(`${what}: result for unknown request ${result.request}`);
    }
    if (nodes.size !== 1) problems.push(`${what}: allocated on ${nodes.size} nodes`);
    if ((status.reservedFor ?? []).length === 0) problems.push(`${what}: reserved for no pod`);
    for (const consumer of status.reservedFor ?? []) {
      const pod = store.get('pods', { namespace: claim.metadata.namespace, name: consumer.name });
      if (pod === undefined || pod.metadata.uid !== consumer.uid) problems.push(`${what}: reserved for pod ${consumer.name} (${consumer.uid}), which has uid ${pod?.metadata.uid}`);
      else if (!nodes.has((pod.spec as DraPodSpec).nodeName ?? '')) problems.push(`${what}: its pod ${consumer.name} runs on another node than its devices`);
    }
    for (const owner of (claim.metadata.ownerReferences ?? []) as { kind: string; name: string; uid: string }[]) {
      if (store.get('pods', { namespace: claim.metadata.namespace, name: owner.name })?.metadata.uid !== owner.uid) problems.push(`${what}: owner pod ${owner.name} has another uid`);
    }
  }
  let claimingPods = 0;
  for (const pod of store.list('pods')) {
    const spec = pod.spec as DraPodSpec;
    if (spec.resourceClaims === undefined) continue;
    claimingPods += 1;
    const what = `pod ${pod.metadata.namespace}/${pod.metadata.name}`;
    const made = (pod.status as { resourceClaimStatuses?: { name: string; resourceClaimName: string }[] }).resourceClaimStatuses ?? [];
    for (const podClaim of spec.resourceClaims) {
      // A claim named in the spec has no status entry; one made from a template has only that.
      const name = podClaim.resourceClaimName ?? made.find((m) => m.name === podClaim.name)?.resourceClaimName;
      const claim = store.get('resourceclaims', { namespace: pod.metadata.namespace, name: name ?? '' });
      if (claim === undefined) problems.push(`${what}: its claim ${podClaim.name} (${name}) does not exist`);
      else if (!((claim.status as ClaimStatus).reservedFor ?? []).some((c) => c.uid === pod.metadata.uid)) problems.push(`${what}: its claim ${name} is not reserved for it`);
    }
    for (const container of spec.containers ?? []) {
      const asked = Object.keys({ ...container.resources?.limits, ...container.resources?.requests }).filter((r) => r.startsWith('nvidia.com/'));
      if (asked.length > 0) problems.push(`${what}: asks for ${asked.join(', ')} besides its claims`);
      for (const used of container.resources?.claims ?? []) if (!spec.resourceClaims.some((c) => c.name === used.name)) problems.push(`${what}: a container uses claim ${used.name}, which the pod lacks`);
    }
  }
  return { problems, claims, claimingPods };
}

interface NodeShape {
  spec?: { unschedulable?: boolean };
  status?: { conditions?: Condition[]; capacity?: Record<string, string>; allocatable?: Record<string, string> };
}

/** Each node by cluster/name: its Ready condition's status, whether it is cordoned, and its GPU capacity and allocatable. */
function nodeStates(world: DemoWorld): Map<string, { ready?: string; cordoned: boolean; capacity?: string; allocatable?: string }> {
  const states = new Map<string, { ready?: string; cordoned: boolean; capacity?: string; allocatable?: string }>();
  for (const cluster of world.clusters) {
    for (const node of cluster.api.store.list('nodes')) {
      const { spec, status } = node as NodeShape;
      states.set(`${cluster.name}/${node.metadata.name}`, {
        ready: status?.conditions?.find((c) => c.type === 'Ready')?.status,
        cordoned: spec?.unschedulable === true,
        capacity: status?.capacity?.['nvidia.com/gpu'],
        allocatable: status?.allocatable?.['nvidia.com/gpu'],
      });
    }
  }
  return states;
}

/** Running pods on a node out of service, or more GPUs held on the node with a failed GPU than it has left. */
function podsOnGpusOutOfService(world: DemoWorld): string[] {
  const problems: string[] = [];
  let heldOnUnhealthy = 0;
  for (const cluster of world.clusters) {
    for (const pod of cluster.api.store.list('pods')) {
      const status = pod.status as { phase?: string };
      const spec = pod.spec as DraPodSpec;
      const gpus = Number(spec.containers?.[0]?.resources?.limits?.['nvidia.com/gpu'] ?? 0);
      // The dcgm-exporter, a DaemonSet's pod, holds no GPU and runs on every node, cordoned or not.
      if (status.phase !== 'Running' || gpus === 0) continue;
      if (spec.nodeName === CORDONED_NODE || spec.nodeName === NOT_READY_NODE) {
        problems.push(`${pod.metadata.name} runs on ${spec.nodeName}`);
      }
      if (spec.nodeName === UNHEALTHY_GPU_NODE) heldOnUnhealthy += gpus;
    }
  }
  if (heldOnUnhealthy > 7) problems.push(`${heldOnUnhealthy} GPUs held on ${UNHEALTHY_GPU_NODE}, which has 7 healthy ones`);
  return problems;
}

function checkWorld(world: DemoWorld, now: number): { problems: string[]; jobs: number; started: number; finished: number; pods: number } {
  const problems: string[] = [];
  let jobs = 0;
  let started = 0;
  let finished = 0;
  let pods = 0;
  for (const cluster of world.clusters) {
    const store = cluster.api.store;
    const jobsByUid = new Map<string, KubeObject>();
    for (const job of store.list('jobs')) {
      const what = `${cluster.name} Job ${job.metadata.namespace}/${job.metadata.name}`;
      const timeline = jobTimeline(job);
      problems.push(...outOfOrder(what, timeline, now));
      jobsByUid.set(job.metadata.uid ?? '', job);
      jobs += 1;
      if (timeline[1]?.[1] !== undefined) started += 1;
      if (timeline.slice(2).some(([, time]) => time !== undefined)) finished += 1;
    }
    for (const pod of store.list('pods')) {
      const what = `${cluster.name} Pod ${pod.metadata.namespace}/${pod.metadata.name}`;
      for (const timeline of podTimeline(pod)) problems.push(...outOfOrder(what, timeline, now));
      pods += 1;
      const owners = (pod.metadata.ownerReferences ?? []) as { kind: string; name: string; uid?: string }[];
      const owner = owners.find((ref) => ref.kind === 'Job');
      if (owner === undefined) continue;
      const job = jobsByUid.get(owner.uid ?? '');
      if (job === undefined) problems.push(`${what}: its Job ${owner.name} does not exist`);
      else if (Date.parse(pod.metadata.creationTimestamp ?? '') < Date.parse(job.metadata.creationTimestamp ?? '')) {
        problems.push(`${what}: created ${pod.metadata.creationTimestamp}, before its Job ${job.metadata.creationTimestamp}`);
      }
    }
  }
  return { problems, jobs, started, finished, pods };
}

describe('demo world', function () {
  // Each world starts two simulated API servers and 22 exporters on loopback.
  this.timeout(60_000);

  it('links its DRA pods, claims and devices by name and uid, as a real cluster does', async () => {
    const dir = makeTempDir('gpucap-demo-world-');
    const world = await startDemoWorld({ dir: dir.path, now: NOW });
    try {
      const dra = checkDra(world);
      expect(dra.problems, dra.problems.join('\n')).to.deep.equal([]);
      expect(dra).to.include({ claims: 3, claimingPods: 4 });
      const discovered = await fetch(`${world.home.api.url}/apis/resource.k8s.io`, { headers: { authorization: 'Bearer gpu-east-demo-token' } });
      expect(discovered.status, 'the demo serves resource.k8s.io').to.equal(200);
    } finally {
      await world.close();
      dir.remove();
    }
  });

  it('has every GPU node Ready, but one cordoned, one NotReady and one whose device plugin took a failed GPU out', async () => {
    const dir = makeTempDir('gpucap-demo-world-');
    const world = await startDemoWorld({ dir: dir.path, now: NOW });
    try {
      const states = nodeStates(world);
      // 10 H100 nodes, a MIG, a time-sliced and a DRA one in gpu-east; 12 L40S and 2 L4 nodes in gpu-west.
      expect(states.size).to.equal(27);
      for (const node of L4_NODES) {
        expect(states.get(`gpu-west/${node}`), node).to.deep.equal({ ready: 'True', cordoned: false, capacity: '1', allocatable: '1' });
      }
      expect(states.get(`gpu-east/${CORDONED_NODE}`)).to.include({ ready: 'True', cordoned: true });
      expect(states.get(`gpu-west/${NOT_READY_NODE}`)).to.include({ ready: 'Unknown', cordoned: false });
      const unhealthy = { ready: 'True', cordoned: false, capacity: '8', allocatable: '7' };
      expect(states.get(`gpu-east/${UNHEALTHY_GPU_NODE}`)).to.deep.equal(unhealthy);
      const others = [...states].filter(([key]) => ![CORDONED_NODE, NOT_READY_NODE].includes(key.split('/')[1] ?? ''));
      expect(others.filter(([, state]) => state.ready !== 'True' || state.cordoned).map(([key]) => key)).to.deep.equal([]);
    } finally {
      await world.close();
      dir.remove();
    }
  });

  for (const seed of SEEDS) {
    it(`with seed ${seed}, every Job and Pod is created, started, finished, before and after churn, never on a GPU out of service`, async () => {
      const dir = makeTempDir('gpucap-demo-world-');
      const world = await startDemoWorld({ dir: dir.path, now: NOW, seed });
      try {
        const atStart = checkWorld(world, NOW);
        expect(atStart.problems, atStart.problems.join('\n')).to.deep.equal([]);
        const { finished, running, pending } = world.jobs;
        expect(atStart.jobs).to.equal(finished + running + pending);
        expect(atStart).to.include({ started: finished + running, finished });
        expect(running, 'Jobs running at the start').to.be.greaterThan(0);
        expect(podsOnGpusOutOfService(world)).to.deep.equal([]);

        let now = NOW;
        for (let step = 0; step < 60; step += 1) {
          now += STEP_MS;
          world.step(now);
        }
        const afterChurn = checkWorld(world, now);
        expect(afterChurn.problems, afterChurn.problems.join('\n')).to.deep.equal([]);
        // The churn did start, finish and submit Jobs, so their timestamps were checked too.
        expect(afterChurn.jobs, 'Jobs submitted by the churn').to.be.greaterThan(atStart.jobs);
        expect(afterChurn.started, 'Jobs started by the churn').to.be.greaterThan(atStart.started);
        expect(afterChurn.finished, 'Jobs finished by the churn').to.be.greaterThan(atStart.finished);
        expect(afterChurn.pods).to.be.greaterThan(atStart.pods);
        expect(podsOnGpusOutOfService(world)).to.deep.equal([]);
      } finally {
        await world.close();
        dir.remove();
      }
    });
  }
});
