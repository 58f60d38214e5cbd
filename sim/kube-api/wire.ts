// JSON of stored objects as the API sends them. LIST items are serialized per page and not kept
// (keeping the text of 100k pods would double the sim's memory for a relist that rarely comes). A
// watch event's object is serialized once however many watches send it: the store notifies every
// watch synchronously, one event after the other, so a one-entry memo is enough.
import type { KubeObject } from './resources.js';

let last: { object: KubeObject; json: string } | undefined;

/** The object as a LIST item: without kind and apiVersion, as the real API sends items. */
export function itemJson(object: KubeObject): string {
  return JSON.stringify({ ...object, kind: undefined, apiVersion: undefined });
}

/** The whole object (kind and apiVersion first), as watch events and GETs carry it. */
export function objectJson(object: KubeObject): string {
  if (last?.object !== object) last = { object, json: JSON.stringify({ kind: object.kind, apiVersion: object.apiVersion, ...object }) };
  return last.json;
}
