// The API token records file (YAML or JSON): its schema, and the parser shared by the token store
// and the CLI. Every problem names the record and the field, never a hash.
import { Type, type Static } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { ROLES, type Role } from '../access/principal.js';
import { parseIsoInstant } from '../domain/time.js';

export const API_TOKEN_ID_PATTERN = '^[a-z0-9][a-z0-9._-]{0,62}$';

export const ApiTokenRecordSchema = Type.Object(
  {
    id: Type.String({ pattern: API_TOKEN_ID_PATTERN, description: 'Unique name of the token, shown in logs.' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the whole token (including `gca_`), lowercase hex.' }),
    organization_id: Type.String({ minLength: 1, maxLength: 128 }),
    role: Type.Unsafe<Role>({ type: 'string', enum: [...ROLES] }),
    initiatives: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { uniqueItems: true })),
    expires_at: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time; the token is rejected from then on.' })),
    description: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

export const ApiTokenFileSchema = Type.Object({ tokens: Type.Array(ApiTokenRecordSchema) }, { additionalProperties: false });

export type ApiTokenRecordInput = Static<typeof ApiTokenRecordSchema>;

/** A validated record, as the store uses it. */
export interface ApiTokenRecord {
  id: string;
  sha256: string;
  organizationId: string;
  role: Role;
  initiatives: readonly string[];
  /** Epoch ms from which the token is rejected; null: never expires. */
  expiresAt: number | null;
  description: string | null;
}

const validateFile = new Ajv({ allErrors: true }).compile<Static<typeof ApiTokenFileSchema>>(ApiTokenFileSchema);

/** Parses and validates the file's text; throws an Error naming the first problems (record, field). */
export function parseApiTokenFile(text: string): ApiTokenRecord[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new Error(`not valid YAML or JSON: ${(error as Error).message.split('\n')[0]}`, { cause: error });
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new Error('must be a mapping with a "tokens" list');
  }
  if (!validateFile(doc)) {
    const problems = [...new Set((validateFile.errors ?? []).map((e) => describe(e, doc)))];
    throw new Error(problems.slice(0, 5).join('; ') + (problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''));
  }

  const problems: string[] = [];
  const ids = new Set<string>();
  const hashes = new Map<string, string>();
  const records = doc.tokens.map((input, index): ApiTokenRecord => {
    const where = recordLabel(index, input.id);
    if (ids.has(input.id)) problems.push(`${where}: "id" is used by an earlier record`);
    ids.add(input.id);
    const sameHash = hashes.get(input.sha256);
    if (sameHash !== undefined) problems.push(`${where}: "sha256" is the same as in record "${sameHash}"`);
    hashes.set(input.sha256, input.id);
    let expiresAt: number | null = null;
    if (input.expires_at !== undefined) {
      expiresAt = parseIsoInstant(input.expires_at);
      if (expiresAt === null) {
        problems.push(`${where}: "expires_at" must be an ISO 8601 date or date-time with ` +
          `offset (2027-06-30 or 2027-06-30T00:00:00Z), got "${input.expires_at}"`);
      }
    }
    return {
      id: input.id,
      sha256: input.sha256,
      organizationId: input.organization_id,
      role: input.role,
      initiatives: Object.freeze([...(input.initiatives ?? [])]),
      expiresAt,
      description: input.description ?? null,
    };
  });
  if (problems.length > 0) throw new Error(problems.join('; '));
  return records;
}

function recordLabel(index: number, id: unknown): string {
  return typeof id === 'string' ? `tokens[${index}] (id "${id}")` : `tokens[${index}]`;
}

const FIELD_HINTS: Record<string, string> = {
  id: `must match ${API_TOKEN_ID_PATTERN}`,
  sha256: 'must be 64 lowercase hex characters (the SHA-256 of the token)',
};

function describe(error: ErrorObject, doc: object): string {
  const segments = error.instancePath.split('/').slice(1);
  if (segments[0] !== 'tokens' || segments.length === 0) {
    if (error.keyword === 'required') return `"${(error.params as { missingProperty: string }).missingProperty}" is required`;
    if (error.keyword === 'additionalProperties') {
      return `unknown field "${(error.params as { additionalProperty: string }).additionalProperty}"`;
    }
    return `"${segments.join('.') || 'file'}" ${error.message ?? 'is invalid'}`;
  }
  if (segments.length === 1) return `"tokens" ${error.message ?? 'is invalid'}`;
  const index = Number(segments[1]);
  const records = (doc as { tokens: unknown[] }).tokens;
  const where = recordLabel(index, (records[index] as { id?: unknown } | null)?.id);
  if (segments.length === 2) {
    if (error.keyword === 'required') return `${where}: "${(error.params as { missingProperty: string }).missingProperty}" is required`;
    if (error.keyword === 'additionalProperties') {
      return `${where}: unknown field "${(error.params as { additionalProperty: string }).additionalProperty}"`;
    }
    return `${where}: ${error.message ?? 'is invalid'}`;
  }
  const field = segments[2] ?? '';
  const item = segments.length > 3 ? ` (item ${segments[3]})` : '';
  if (error.keyword === 'enum') {
    return `${where}: "${field}" must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  }
  if (error.keyword === 'pattern' && FIELD_HINTS[field]) return `${where}: "${field}" ${FIELD_HINTS[field]}`;
  return `${where}: "${field}"${item} ${error.message ?? 'is invalid'}`;
}
