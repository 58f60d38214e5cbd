// Writes keys straight into the etcd behind envtest's kube-apiserver, over etcd's own gRPC API
// (KV/Txn on HTTP/2, hand-encoded: three message types do not justify a gRPC dependency; its JSON
// gateway costs etcd about twice the CPU per put): up to `batch` puts per transaction (etcd's
// --max-txn-ops defaults to 128), a few transactions at a time. The API server's watch cache sees the
// writes as etcd events, as it would see another API server's.
import { readFileSync } from 'node:fs';
import { connect, type ClientHttp2Session } from 'node:http2';
import { join } from 'node:path';
import { ProtoWriter } from './protobuf.js';

/** etcd's registry keys for the kinds the benchmark writes (a Node's is "minions", from long ago). */
export function registryKey(kind: 'Pod' | 'Job' | 'Node' | 'Namespace', name: string, namespace?: string): string {
  switch (kind) {
    case 'Pod':
      return `/registry/pods/${namespace}/${name}`;
    case 'Job':
      return `/registry/jobs/${namespace}/${name}`;
    case 'Node':
      return `/registry/minions/${name}`;
    case 'Namespace':
      return `/registry/namespaces/${name}`;
  }
}

/** The client URL of the etcd envtest started in `envtestDir` (from the env file start.sh writes). */
export function etcdUrlOf(envtestDir: string): string {
  const port = /^ENVTEST_ETCD_PORT=(\d+)$/m.exec(readFileSync(join(envtestDir, 'env'), 'utf8'))?.[1];
  if (port === undefined) throw new Error(`Cannot find ENVTEST_ETCD_PORT in ${join(envtestDir, 'env')}`);
  return `http://127.0.0.1:${port}`;
}

export interface EtcdEntry {
  key: string;
  value: Buffer;
  /** What the entry is (the kind): revisions are kept per tag. */
  tag: string;
}

export class EtcdWriter {
  puts = 0;
  transactions = 0;
  bytes = 0;
  /**
   * Per tag, the highest etcd revision of a transaction that wrote one: a resource's watch cache
   * holds every write once it has reached that revision.
   */
  readonly revisions: Record<string, number> = {};

  constructor(
    private readonly url: string,
    private readonly options: { batch: number; concurrency: number } = { batch: 128, concurrency: 4 },
  ) {}

  /** Puts every entry; `next` is called until it returns undefined, so the caller can encode lazily. */
  async putAll(next: () => EtcdEntry | undefined): Promise<void> {
    const session = connect(this.url);
    session.on('error', () => undefined); // Each request reports its own failure.
    let done = false;
    const worker = async () => {
      const writer = new ProtoWriter();
      while (!done) {
        writer.length = 0;
        const tags = new Set<string>();
        let puts = 0;
        while (puts < this.options.batch) {
          const entry = next();
          if (entry === undefined) {
            done = true;
            break;
          }
          // TxnRequest.success (2): RequestOp.request_put (2): PutRequest { key 1, value 2 }.
          const op = writer.begin(2);
          const put = writer.begin(2);
          writer.bytes(1, entry.key);
          writer.bytes(2, entry.value);
          writer.end(put);
          writer.end(op);
          this.bytes += entry.value.length;
          tags.add(entry.tag);
          puts += 1;
        }
        if (puts === 0) return;
        const revision = await txn(session, writer.take());
        for (const tag of tags) this.revisions[tag] = Math.max(this.revisions[tag] ?? 0, revision);
        this.puts += puts;
        this.transactions += 1;
      }
    };
    try {
      await Promise.all(Array.from({ length: this.options.concurrency }, worker));
    } finally {
      session.close();
    }
  }
}

/** One unary KV/Txn call; the revision of its response header. */
function txn(session: ClientHttp2Session, message: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = session.request({ ':method': 'POST', ':path': '/etcdserverpb.KV/Txn', 'content-type': 'application/grpc', te: 'trailers' });
    const frame = Buffer.alloc(5);
    frame.writeUInt32BE(message.length, 1);
    const chunks: Buffer[] = [];
    let status: string | undefined;
    let statusMessage = '';
    const read = (headers: Record<string, unknown>) => {
      if (headers['grpc-status'] !== undefined) {
        status = String(headers['grpc-status']);
        statusMessage = decodeURIComponent(String(headers['grpc-message'] ?? ''));
      }
    };
    request.on('response', read);
    request.on('trailers', read);
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('error', reject);
    request.on('end', () => {
      if (status !== '0') return reject(new Error(`etcd Txn failed: grpc-status ${status ?? 'missing'} ${statusMessage}`));
      // A 5-byte frame header, then TxnResponse { header 1: ResponseHeader { revision 3 } }.
      resolve(revisionOf(Buffer.concat(chunks).subarray(5)));
    });
    request.end(Buffer.concat([frame, message]));
  });
}

function revisionOf(response: Buffer): number {
  const header = field(response, 1);
  return header === undefined ? 0 : varintField(header, 3);
}

/** The first length-delimited field `number` of a message. */
function field(message: Buffer, number: number): Buffer | undefined {
  let at = 0;
  while (at < message.length) {
    const [tag, afterTag] = varint(message, at);
    at = afterTag;
    const wireType = tag % 8;
    if (wireType === 0) {
      at = varint(message, at)[1];
    } else if (wireType === 2) {
      const [size, afterSize] = varint(message, at);
      if (Math.floor(tag / 8) === number) return message.subarray(afterSize, afterSize + size);
      at = afterSize + size;
    } else {
      return undefined; // No fixed-width fields in what etcd answers here.
    }
  }
  return undefined;
}

function varintField(message: Buffer, number: number): number {
  let at = 0;
  while (at < message.length) {
    const [tag, afterTag] = varint(message, at);
    const [value, afterValue] = varint(message, afterTag);
    if (tag === number * 8) return value;
    at = afterValue;
  }
  return 0;
}

function varint(buffer: Buffer, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (;;) {
    const byte = buffer[at++] ?? 0;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, at];
    scale *= 0x80;
  }
}
