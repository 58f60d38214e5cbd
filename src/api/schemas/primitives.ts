// Reusable schema pieces. String enums are plain JSON Schema `enum`s (not unions of literals) so
// validation errors can list the allowed values and the OpenAPI document stays readable.
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * A value that may be null, as `type: [T, "null"]`: generated clients map that to an optional
 * (nullable) property, while an `anyOf` with a null branch makes several of them emit a wrapper type.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  // Object.entries leaves out TypeBox's Kind symbol, which would otherwise call the result a plain T.
  const keywords = Object.fromEntries(Object.entries(schema));
  return Type.Unsafe<Static<T> | null>({ ...keywords, type: [keywords.type, 'null'] });
}

// What a query date may look like; the formats add the calendar (no 2026-02-30). The pattern also
// keeps out what the RFC 3339 formats let through but no client sends: a space for the T, a leap second.
export const DATE_PATTERN = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$';
export const DATE_TIME_PATTERN =
  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)$';

/**
 * Query dates: an RFC 3339 date-time with its offset, or a date alone (00:00 UTC). The service
 * validates with this very schema, so the OpenAPI document says exactly what is accepted.
 */
export const InstantParam = (description: string) =>
  Type.Unsafe<string>({
    type: 'string',
    anyOf: [
      { type: 'string', format: 'date-time', pattern: DATE_TIME_PATTERN },
      { type: 'string', format: 'date', pattern: DATE_PATTERN },
    ],
    description: `${description} A date-time with offset (\`2026-11-01T09:30:00Z\`) or a date alone (\`2026-11-01\`, 00:00 UTC).`,
  });

export const IdParam = (description: string) => Type.String({ minLength: 1, maxLength: 253, description });

export const Timestamp = (description: string) => Type.String({
  format: 'date-time',
  description: `${description} ISO 8601, UTC, with \`Z\`.`,
});

export const WORKLOAD_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$';
