// What the flat records of Pods and Jobs (pod-facts.ts, job-facts.ts) share: identity, attribution,
// the times every object has (in kube-time seconds, null when unknown) and when this version was
// first seen. Fields are set in one order by one constructor, so every record has one V8 shape.
import type { OwnAttribution } from '../attribution/own-attribution.js';
import { fromKubeTime } from './kube-time.js';

export interface ObjectIdentity {
  uid: string;
  name: string;
  namespace: string | undefined;
  resourceVersion: string | undefined;
  attribution: OwnAttribution;
}

export interface ObjectTimes {
  created: number | null;
  /** When its deletion was requested: deletionTimestamp − grace period (deletion.ts). */
  deletionRequested: number | null;
  started: number | null;
  /** When the service first saw this version of it (epoch ms; see caches/seen.ts). */
  observedAt: number;
}

export abstract class ObjectFacts implements ObjectIdentity, ObjectTimes {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly resourceVersion: string | undefined;
  readonly attribution: OwnAttribution;
  readonly created: number | null;
  readonly deletionRequested: number | null;
  readonly started: number | null;
  observedAt: number;

  constructor(identity: ObjectIdentity, times: ObjectTimes) {
    this.uid = identity.uid;
    this.name = identity.name;
    this.namespace = identity.namespace;
    this.resourceVersion = identity.resourceVersion;
    this.attribution = identity.attribution;
    this.created = times.created;
    this.deletionRequested = times.deletionRequested;
    this.started = times.started;
    this.observedAt = times.observedAt;
  }

  get createdAt(): number | null {
    return fromKubeTime(this.created);
  }

  get deletionRequestedAt(): number | null {
    return fromKubeTime(this.deletionRequested);
  }

  get startedAt(): number | null {
    return fromKubeTime(this.started);
  }
}
