// The decoding itself, the same on either thread: a watch line → an event with the selected fields
// of its object, a LIST body → its page. A line that is not JSON is skipped, as client-node's Watch
// skips it; BOOKMARK and ERROR objects pass whole (the reflector reads their version and status).
import { selectFields, type FieldSelection } from '../../domain/field-selection.js';
import type { DecodedEvent, ListBody } from './decoder.js';

const SELECTED_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED']);

export function decodeLine(line: string, fields: FieldSelection | undefined): DecodedEvent | undefined {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null) return undefined;
  const { type, object } = data as { type?: unknown; object?: unknown };
  if (typeof type !== 'string') return undefined;
  return { type, object: fields !== undefined && SELECTED_TYPES.has(type) ? selectFields(object, fields) : object };
}

export function decodeList(text: string, fields: FieldSelection | undefined): ListBody | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { metadata, items } = body as { metadata?: { resourceVersion?: unknown; continue?: unknown }; items?: unknown };
  const list = Array.isArray(items) ? items : [];
  return {
    resourceVersion: typeof metadata?.resourceVersion === 'string' ? metadata.resourceVersion : undefined,
    continue: typeof metadata?.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined,
    items: fields === undefined ? list : list.map((item: unknown) => selectFields(item, fields)),
  };
}
