// Which fields of a Kubernetes object the service reads, as data: the watch decoder keeps those and
// drops the rest before an object reaches the main thread. A Pod is 4–20 KB of JSON, and what the
// indexer and the telemetry flow read of it is a tenth of that; copying the rest between threads
// would cost more than the parse it saves.

/**
 * `true` keeps a value whole. An object of selections keeps those properties of an object, each by
 * its own selection, and drops every other; on an array, it applies to each element.
 */
export type FieldSelection = true | { readonly [field: string]: FieldSelection };

/** The part of `value` that `selection` keeps. Values of another shape than expected are kept as they are. */
export function selectFields(value: unknown, selection: FieldSelection): unknown {
  if (selection === true || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((element: unknown) => selectFields(element, selection));
  const source = value as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const field of Object.keys(selection)) {
    if (!Object.hasOwn(source, field)) continue;
    kept[field] = selectFields(source[field], selection[field] as FieldSelection);
  }
  return kept;
}
