// When an object was deleted. Kubernetes sets deletionTimestamp to the moment the object *will* go
// (request time + grace period), so the request time is deletionTimestamp − deletionGracePeriodSeconds.
import type { ObjectMeta } from '../../k8s/objects/k8s-types.js';
import { timestampMs } from './timestamps.js';

/**
 * The time deletion was requested (from deletionTimestamp), else the time a delete was observed
 * (`deleted.at`: a delete event, or absence after a relist), else null when not deleted.
 */
export function deletionTime(meta: ObjectMeta | undefined, deleted?: { at: number }): number | null {
  const scheduled = timestampMs(meta?.deletionTimestamp);
  if (scheduled !== null) return scheduled - (meta?.deletionGracePeriodSeconds ?? 0) * 1000;
  return deleted?.at ?? null;
}
