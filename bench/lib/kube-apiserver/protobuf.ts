// Encodes a Kubernetes object from its JSON form into the bytes kube-apiserver keeps in etcd: the
// magic "k8s\0", then a runtime.Unknown holding apiVersion, kind and the object's protobuf. That lets
// the benchmark write 100k pods straight into etcd in seconds, in exactly the format the API server
// would have written (so its LISTs decode protobuf from etcd, as in production), where creating them
// through the API runs at about 100 pods/s on 2 cores.
//
// The field numbers come from proto-schema.ts (generated from the server's own .proto
// files). As the API server does with JSON, fields its version does not know are dropped; they are
// collected in `dropped`, so the caller can say which.
import { PROTO_MESSAGES, type ProtoMessageSpec } from './proto-schema.js';

const MAGIC = Buffer.from('k8s\u0000', 'latin1');
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const TIME = `${META}.Time`;
const MICRO_TIME = `${META}.MicroTime`;
const QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';
/** Messages whose JSON is the raw value itself (a bytes field holding JSON). */
const RAW_JSON = new Set([`${META}.FieldsV1`, 'k8s.io.apimachinery.pkg.runtime.RawExtension']);

/** The storage kinds the benchmark writes. */
export const STORAGE_TYPES = {
  Pod: { message: 'k8s.io.api.core.v1.Pod', apiVersion: 'v1' },
  Node: { message: 'k8s.io.api.core.v1.Node', apiVersion: 'v1' },
  Namespace: { message: 'k8s.io.api.core.v1.Namespace', apiVersion: 'v1' },
  Job: { message: 'k8s.io.api.batch.v1.Job', apiVersion: 'batch/v1' },
} as const;
export type StorageKind = keyof typeof STORAGE_TYPES;

/** A growable buffer with protobuf's wire primitives. */
export class ProtoWriter {
  buffer = Buffer.allocUnsafe(8192);
  length = 0;

  private ensure(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + extra));
    this.buffer.copy(bigger, 0, 0, this.length);
    this.buffer = bigger;
  }

  varint(value: number): void {
    this.ensure(10);
    if (value < 0) {
      // Negative int32/int64: ten bytes of two's complement.
      let big = BigInt.asUintN(64, BigInt(value));
      while (big >= 0x80n) {
        this.buffer[this.length++] = Number(big & 0x7fn) | 0x80;
        big >>= 7n;
      }
      this.buffer[this.length++] = Number(big);
      return;
    }
    while (value >= 0x80) {
      this.buffer[this.length++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.buffer[this.length++] = value;
  }

  tag(field: number, wireType: 0 | 2): void {
    this.varint(field * 8 + wireType);
  }

  bytes(field: number, data: Buffer | string): void {
    const size = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    this.tag(field, 2);
    this.varint(size);
    this.ensure(size);
    if (typeof data === 'string') this.buffer.write(data, this.length, 'utf8');
    else data.copy(this.buffer, this.length);
    this.length += size;
  }

  /**
   * Opens a length-delimited field: its content is appended next, then end() patches the length in.
   * (Not a callback: tsx names every closure it creates, which cost more than the encoding itself.)
   */
  begin(field: number): number {
    this.tag(field, 2);
    this.ensure(1);
    this.length += 1;
    return this.length - 1;
  }

  end(at: number): void {
    const size = this.length - at - 1;
    if (size < 0x80) {
      this.buffer[at] = size;
      return;
    }
    // The length needs more than the one byte reserved: shift the content right to make room.
    let lengthBytes = 1;
    for (let s = size; s >= 0x80; s = Math.floor(s / 0x80)) lengthBytes += 1;
    this.ensure(lengthBytes - 1);
    this.buffer.copyWithin(at + lengthBytes, at + 1, this.length);
    this.length += lengthBytes - 1;
    let s = size;
    for (let i = 0; i < lengthBytes; i += 1) {
      this.buffer[at + i] = i === lengthBytes - 1 ? s : (s % 0x80) | 0x80;
      s = Math.floor(s / 0x80);
    }
  }

  take(): Buffer {
    return Buffer.from(this.buffer.subarray(0, this.length));
  }
}

export class StorageEncoder {
  /** Paths (message.field) of JSON fields the schema does not have, dropped as the API would. */
  readonly dropped = new Set<string>();
  private readonly writer = new ProtoWriter();

  /** The etcd value for `object` of `kind` (its metadata.resourceVersion, which etcd assigns, is left out). */
  encode(kind: StorageKind, object: Record<string, unknown>): Buffer {
    const { message, apiVersion } = STORAGE_TYPES[kind];
    const { apiVersion: _v, kind: _k, ...fields } = object;
    const metadata = fields.metadata as Record<string, unknown> | undefined;
    if (metadata !== undefined) {
      const { resourceVersion: _rv, ...rest } = metadata;
      fields.metadata = rest;
    }
    const w = this.writer;
    w.length = 0;
    w.buffer.write('k8s\u0000', 0, 'latin1');
    w.length = MAGIC.length;
    const typeMeta = w.begin(1);
    w.bytes(1, apiVersion);
    w.bytes(2, kind);
    w.end(typeMeta);
    const raw = w.begin(2);
    this.message(message, fields);
    w.end(raw);
    w.bytes(3, '');
    w.bytes(4, '');
    return w.take();
  }

  private message(type: string, value: Record<string, unknown>): void {
    const fields = compiled(type);
    let inlined: Map<number, Record<string, unknown>> | undefined;
    for (const key in value) {
      const item = value[key];
      if (item === null || item === undefined) continue;
      const field = fields.get(key);
      if (field === undefined) {
        this.dropped.add(`${shortName(type)}.${key}`);
      } else if (field.inlinedIn !== undefined) {
        // Go inlines some structs into the JSON (a Volume's source, a ConfigMap source's name): the
        // key goes into that inlined message, written once all keys are sorted out.
        inlined ??= new Map();
        const part = inlined.get(field.inlinedIn) ?? {};
        part[key] = item;
        inlined.set(field.inlinedIn, part);
      } else {
        this.field(field.number, field.type, field.kind, item, type, key);
      }
    }
    if (inlined === undefined) return;
    for (const [number, part] of inlined) {
      const inner = fields.inlineTypes.get(number) ?? '';
      const at = this.writer.begin(number);
      this.message(inner, part);
      this.writer.end(at);
    }
  }

  private field(number: number, type: string, kind: 0 | 1 | 2, value: unknown, parent: string, key: string): void {
    if (kind === 1) {
      if (!Array.isArray(value)) throw new Error(`Cannot encode ${parent}.${key}: expected an array, got ${JSON.stringify(value)}`);
      for (const item of value) if (item !== null) this.single(number, type, item, parent, key);
      return;
    }
    if (kind === 2) {
      const w = this.writer;
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        const at = w.begin(number);
        w.bytes(1, key);
        this.single(2, type, item, parent, key);
        w.end(at);
      }
      return;
    }
    this.single(number, type, value, parent, key);
  }

  private single(number: number, type: string, value: unknown, parent: string, key: string): void {
    const w = this.writer;
    switch (type) {
      case 'string':
        w.bytes(number, String(value));
        return;
      case 'bool':
        w.tag(number, 0);
        w.varint(value === true ? 1 : 0);
        return;
      case 'int32':
      case 'int64':
        if (typeof value !== 'number' || !Number.isInteger(value)) throw new Error(`Cannot encode ${pathOf(parent, key)}: expected an integer, got ${JSON.stringify(value)}`);
        w.tag(number, 0);
        w.varint(value);
        return;
      case 'bytes':
        w.bytes(number, Buffer.from(String(value), 'base64'));
        return;
      case TIME:
      case MICRO_TIME: {
        const ms = Date.parse(String(value));
        if (Number.isNaN(ms)) throw new Error(`Cannot encode ${pathOf(parent, key)}: not a time: ${JSON.stringify(value)}`);
        const micros = /\.(\d+)/.exec(String(value))?.[1] ?? '';
        const at = w.begin(number);
        w.tag(1, 0);
        w.varint(Math.floor(ms / 1000));
        if (type === MICRO_TIME && micros !== '') {
          w.tag(2, 0);
          w.varint(Number(micros.padEnd(9, '0').slice(0, 9)));
        }
        w.end(at);
        return;
      }
      case QUANTITY: {
        const at = w.begin(number);
        w.bytes(1, String(value));
        w.end(at);
        return;
      }
      case INT_OR_STRING: {
        const at = w.begin(number);
        w.tag(1, 0);
        if (typeof value === 'number') {
          w.varint(0);
          w.tag(2, 0);
          w.varint(value);
        } else {
          w.varint(1);
          w.bytes(3, String(value));
        }
        w.end(at);
        return;
      }
      default: {
        if (typeof value !== 'object' && !RAW_JSON.has(type)) throw new Error(`Cannot encode ${pathOf(parent, key)}: expected an object for ${shortName(type)}, got ${JSON.stringify(value)}`);
        const at = w.begin(number);
        if (RAW_JSON.has(type)) w.bytes(1, JSON.stringify(value));
        else this.message(type, value as Record<string, unknown>);
        w.end(at);
      }
    }
  }
}

interface CompiledField {
  number: number;
  type: string;
  kind: 0 | 1 | 2;
  /** Set for a JSON key that belongs to an inlined message: that message's field number here. */
  inlinedIn?: number;
}

type CompiledMessage = Map<string, CompiledField> & { inlineTypes: Map<number, string> };

const COMPILED = new Map<string, CompiledMessage>();

/** A message's fields by JSON key, inlined messages' keys included (built once per message). */
function compiled(type: string): CompiledMessage {
  const cached = COMPILED.get(type);
  if (cached !== undefined) return cached;
  const spec: ProtoMessageSpec | undefined = PROTO_MESSAGES[type];
  if (spec === undefined) throw new Error(`Cannot encode ${type}: not in proto-schema.ts`);
  const inline = spec.inline ?? [];
  const fields = Object.assign(new Map<string, CompiledField>(), { inlineTypes: new Map<number, string>() });
  for (const [key, [number, fieldType, kind]] of Object.entries(spec.fields)) {
    if (!inline.includes(number)) {
      fields.set(key, { number, type: fieldType, kind });
      continue;
    }
    fields.inlineTypes.set(number, fieldType);
    for (const innerKey of compiled(fieldType).keys()) if (!fields.has(innerKey)) fields.set(innerKey, { number, type: fieldType, kind: 0, inlinedIn: number });
  }
  COMPILED.set(type, fields);
  return fields;
}

function pathOf(parent: string, key: string): string {
  return `${shortName(parent)}.${key}`;
}

function shortName(type: string): string {
  return type.slice(type.lastIndexOf('.') + 1);
}
