// The decoding itself, the same on either thread: a watch line → an event with the selected fields
// of its object, a LIST body → its page. A line that is not JSON is skipped, as client-node's Watch
// skips it; BOOKMARK and ERROR objects pass whole (the reflector reads their version and status).
import { selectFields, type FieldSelection } from '../../domain/field-selection.js';
import type { DecodedEvent, ListBody } from './decoder.js';

const SELECTED_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED']);

/** The JSON object `text` holds, else null (not JSON, or JSON of another kind: an array, a string). */
function jsonObject(text: string): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

export function decodeLine(line: string, fields: FieldSelection | undefined): DecodedEvent | undefined {
  const data = jsonObject(line);
  if (data === null) return undefined;
  const { type, object } = data as { type?: unknown; object?: unknown };
  if (typeof type !== 'string') return undefined;
  return { type, object: fields !== undefined && SELECTED_TYPES.has(type) ? selectFields(object, fields) : object };
}

export function decodeList(text: string, fields: FieldSelection | undefined): ListBody | null {
  const body = jsonObject(text);
  if (body === null) return null;
  const { metadata, items } = body as { metadata?: { resourceVersion?: unknown; continue?: unknown }; items?: unknown };
  const list = Array.isArray(items) ? items : [];
  return {
    resourceVersion: typeof metadata?.resourceVersion === 'string' ? metadata.resourceVersion : undefined,
    continue: typeof metadata?.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined,
    items: fields === undefined ? list : list.map((item: unknown) => selectFields(item, fields)),
  };
}
