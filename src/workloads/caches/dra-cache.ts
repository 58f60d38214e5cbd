// One cluster's Dynamic Resource Allocation objects, as the GPU count reads them: the devices the
// drivers' ResourceSlices publish, the device type each DeviceClass selects, and the ResourceClaims
// with the pods they are reserved for. What a pod's claims held is kept once it is seen
// (#held): a claim made from a template is deleted with its pod, often before the pod's last
// mapping, and the GPU-hours it gave must stay. Each change says which pods to map again.
import { classDeviceType, claimShareOfPod, reservedPods, sliceDevices, type DraDevice } from '../../k8s/gpus/dra-share.js';
import { addShares, NO_SHARE, type GpuShare, type ShareSettings } from '../../k8s/gpus/pod-share.js';
import type { DeviceClass, ResourceClaim, ResourceSlice } from '../../k8s/objects/dra-types.js';
import type { WholeEvent } from '../../k8s/objects/resource-event.js';
import type { PodFacts } from '../facts/pod-facts.js';

const claimKey = (namespace: string | undefined, name: string | undefined): string => `${namespace ?? ''}/${name ?? ''}`;
const keyOf = (claim: ResourceClaim): string => claimKey(claim.metadata?.namespace, claim.metadata?.name);

/** Which pods a change affects: by uid, or all that use claims (a slice or class changed, or claims were relisted). */
export type DraChange = { pods: ReadonlySet<string> } | 'all' | 'none';

export class DraCache {
  readonly #settings: ShareSettings;
  /** Each slice's devices, by slice name; #devices merges them. */
  readonly #slices = new Map<string, Map<string, DraDevice>>();
  readonly #devices = new Map<string, DraDevice>();
  readonly #classTypes = new Map<string, string | null>();
  readonly #claims = new Map<string, ResourceClaim>();
  /** pod uid → the keys of the claims reserved for it. */
  readonly #claimsOfPod = new Map<string, Set<string>>();
  /** claim key → the uids of the cached pods that name it. */
  readonly #podsNaming = new Map<string, Set<string>>();
  /** pod uid → what its claims held when last seen with any. */
  readonly #held = new Map<string, GpuShare>();
  /** pod uid → its Job's uid (null: a pod of its own), for the cached pods that use claims. */
  readonly #jobOfPod = new Map<string, string | null>();
  #served = false;
  readonly #lookup = {
    device: (key: string): DraDevice | undefined => this.#devices.get(key),
    classType: (name: string): string | null => this.#classTypes.get(name) ?? null,
  };

  constructor(settings: ShareSettings = {}) {
    this.#settings = settings;
  }

  onSliceEvent(event: WholeEvent<ResourceSlice>): DraChange {
    if (event.type === 'SYNC') {
      this.#slices.clear();
      for (const slice of event.items) this.#slices.set(slice.metadata?.name ?? '', sliceDevices(slice));
    } else {
      const name = event.object.metadata?.name ?? '';
      if (event.type === 'DELETED') this.#slices.delete(name);
      else this.#slices.set(name, sliceDevices(event.object));
    }
    this.#devices.clear();
    for (const devices of this.#slices.values()) for (const [key, device] of devices) this.#devices.set(key, device);
    return 'all';
  }

  onClassEvent(event: WholeEvent<DeviceClass>): DraChange {
    if (event.type === 'SYNC') {
      this.#classTypes.clear();
      for (const deviceClass of event.items) this.#classTypes.set(deviceClass.metadata?.name ?? '', classDeviceType(deviceClass));
      return 'all';
    }
    const name = event.object.metadata?.name ?? '';
    const before = this.#classTypes.get(name);
    if (event.type === 'DELETED') this.#classTypes.delete(name);
    else this.#classTypes.set(name, classDeviceType(event.object));
    return before === this.#classTypes.get(name) ? 'none' : 'all';
  }

  onClaimEvent(event: WholeEvent<ResourceClaim>): DraChange {
    if (event.type === 'SYNC') {
      this.#served = true;
      const inScope = (key: string): boolean => event.namespace === undefined || key.startsWith(`${event.namespace}/`);
      for (const key of [...this.#claims.keys()]) if (inScope(key)) this.#drop(key);
      for (const claim of event.items) this.#put(claim);
      return 'all';
    }
    const key = keyOf(event.object);
    const before = this.#claims.get(key);
    const pods = new Set([...reservedPods(event.object), ...(this.#podsNaming.get(key) ?? [])]);
    if (before !== undefined) for (const uid of reservedPods(before)) pods.add(uid);
    this.#drop(key);
    if (event.type !== 'DELETED') this.#put(event.object);
    return { pods };
  }

  /**
   * Whether the pod may hold GPUs through claims: it names claims, or a claim is (or was) reserved for
   * it. An API server that predates the pod's claim fields drops them, and reservedFor still tells.
   */
  usesClaims(pod: PodFacts): boolean {
    return pod.ask.dra || this.#claimsOfPod.has(pod.uid) || this.#held.has(pod.uid);
  }

  /** Whether any claim was listed: the cluster serves DRA, and a Job's pods may hold GPUs its template does not name. */
  get served(): boolean {
    return this.#served;
  }

  /** Notes a cached pod that uses claims, so that a change of a claim reserved for it or named by it finds it. */
  notePod(pod: PodFacts): void {
    if (!this.usesClaims(pod)) return;
    this.#jobOfPod.set(pod.uid, pod.jobUid);
    for (const name of pod.claimNames) {
      const key = claimKey(pod.namespace, name);
      let pods = this.#podsNaming.get(key);
      if (pods === undefined) this.#podsNaming.set(key, (pods = new Set()));
      pods.add(pod.uid);
    }
  }

  /** Where a noted pod is cached: its Job's uid, null for a pod of its own, undefined for a pod not noted. */
  jobOf(podUid: string): string | null | undefined {
    return this.#jobOfPod.get(podUid);
  }

  /** Forgets a pod no cache holds any more. */
  forgetPod(pod: PodFacts): void {
    if (!this.#jobOfPod.has(pod.uid) && !this.#held.has(pod.uid)) return;
    this.#held.delete(pod.uid);
    this.#jobOfPod.delete(pod.uid);
    for (const name of pod.claimNames) {
      const key = claimKey(pod.namespace, name);
      const pods = this.#podsNaming.get(key);
      pods?.delete(pod.uid);
      if (pods?.size === 0) this.#podsNaming.delete(key);
    }
  }

  /** Keeps only what is held for these pods (after a relist of the pods). */
  retainPods(uids: ReadonlySet<string>): void {
    for (const uid of this.#held.keys()) if (!uids.has(uid)) this.#held.delete(uid);
    for (const uid of this.#jobOfPod.keys()) if (!uids.has(uid)) this.#jobOfPod.delete(uid);
    for (const [key, pods] of this.#podsNaming) {
      for (const uid of pods) if (!uids.has(uid)) pods.delete(uid);
      if (pods.size === 0) this.#podsNaming.delete(key);
    }
  }

  /**
   * What the pod's claims hold now; what they held when last seen once they no longer tell. A claim
   * stops telling when it is gone or deallocated, and when it is no longer reserved for the pod: the
   * claim controller takes a finished pod out of reservedFor, and the claim's split between the pods
   * still reserved is not what the finished one held.
   */
  shareOf(pod: PodFacts): GpuShare {
    if (!this.usesClaims(pod)) return NO_SHARE;
    const held = this.#held.get(pod.uid);
    const keys = new Set(this.#claimsOfPod.get(pod.uid));
    for (const name of pod.claimNames) keys.add(claimKey(pod.namespace, name));
    let share: GpuShare = NO_SHARE;
    for (const key of keys) {
      const claim = this.#claims.get(key);
      if (claim === undefined) continue;
      const reserved = reservedPods(claim);
      if (!reserved.includes(pod.uid) && (reserved.length > 0 || held !== undefined)) {
        if (held !== undefined) return held;
        continue; // reserved for other pods only: this one is not a consumer yet
      }
      share = addShares(share, claimShareOfPod(claim, this.#lookup, this.#settings));
    }
    if (share.devices === 0) return held ?? NO_SHARE;
    this.#held.set(pod.uid, share);
    return share;
  }

  #put(claim: ResourceClaim): void {
    const key = keyOf(claim);
    this.#claims.set(key, claim);
    for (const uid of reservedPods(claim)) {
      let keys = this.#claimsOfPod.get(uid);
      if (keys === undefined) this.#claimsOfPod.set(uid, (keys = new Set()));
      keys.add(key);
    }
  }

  #drop(key: string): void {
    const claim = this.#claims.get(key);
    if (claim === undefined) return;
    this.#claims.delete(key);
    for (const uid of reservedPods(claim)) {
      const keys = this.#claimsOfPod.get(uid);
      keys?.delete(key);
      if (keys?.size === 0) this.#claimsOfPod.delete(uid);
    }
  }
}
