// Reusable schema pieces. String enums are plain JSON Schema `enum`s (not unions of literals) so
// validation errors can list the allowed values and the OpenAPI document stays readable.
import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';

export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Query dates: a date (taken as 00:00 UTC) or a date-time with an offset. Checked by the `instant` format. */
export const InstantParam = (description: string) =>
  Type.String({ format: 'instant', description: `${description} A date (\`2026-11-01\`, 00:00 UTC) or a date-time with offset (\`2026-11-01T09:30:00Z\`).` });

export const IdParam = (description: string) => Type.String({ minLength: 1, maxLength: 253, description });

export const Timestamp = (description: string) => Type.String({ format: 'date-time', description: `${description} ISO 8601, UTC, with \`Z\`.` });

export const WORKLOAD_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$';
