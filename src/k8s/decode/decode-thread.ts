// Watch and LIST decoding on a worker thread (decode-worker.ts). Parsing the API server's JSON was a
// fifth of the main thread at 10,000 events/s, and a LIST page of 500 Pods held the event loop for
// the whole parse. Here the main thread copies each chunk of bytes to the worker and gets back the
// selected fields of each object, which take a fraction of the parse to receive.
//
// One worker serves every stream: the replies of one worker come in the order it sent them, so each
// stream's events stay in order. A stream with more chunks in the worker than HIGH_WATER is asked to
// pause its socket (push() returns false) until the backlog is down to LOW_WATER. A worker that dies
// fails every stream and LIST it held (the reflector watches or lists again after its backoff) and is
// replaced by the next stream or LIST that needs one.
import { Worker } from 'node:worker_threads';
import type { FieldSelection } from '../../domain/field-selection.js';
import { workerEntry } from '../../runtime/worker-entry.js';
import type { DecodeReply, DecodeRequest, DecodeWorkerData } from './decode-protocol.js';
import type { EventSink, EventStream, ListBody, ObjectDecoder } from './decoder.js';

/** Chunks of one stream in the worker before its reading pauses, and the backlog at which it resumes. */
const HIGH_WATER = 16;
const LOW_WATER = 4;

export interface DecodeThreadLogger {
  warn(fields: object, message: string): void;
}

export interface DecodeThreadOptions {
  logger?: DecodeThreadLogger;
  /** The worker's scheduling niceness (default 0: the process's). */
  niceness?: number;
  /** Sees each worker as it is created (tests inject faults by terminating one). */
  onWorker?: (worker: Worker) => void;
}

export interface DecodeThreadStatus {
  /** Watch streams open. */
  streams: number;
  /** Chunks sent and not decoded yet, over all streams. */
  backlog: number;
  /** Workers that stopped while in use and were replaced. */
  restarts: number;
}

interface OpenStream {
  sink: EventSink;
  backlog: number;
  paused: boolean;
  ending: boolean;
}

interface PendingList {
  resolve(body: ListBody | null): void;
  reject(error: Error): void;
}

export class DecodeThread implements ObjectDecoder {
  readonly #options: DecodeThreadOptions;
  readonly #streams = new Map<number, OpenStream>();
  readonly #lists = new Map<number, PendingList>();
  #worker: Worker | null = null;
  #nextId = 1;
  #restarts = 0;
  #closed = false;

  constructor(options: DecodeThreadOptions = {}) {
    this.#options = options;
  }

  events(fields: FieldSelection | undefined, sink: EventSink): EventStream {
    const stream = this.#nextId++;
    const state: OpenStream = { sink, backlog: 0, paused: false, ending: false };
    const open = (): boolean => this.#streams.get(stream) === state;
    if (this.#closed) queueMicrotask(() => sink.onError(closedError()));
    else {
      this.#streams.set(stream, state);
      this.#send({ type: 'open', stream, fields });
    }
    return {
      push: (chunk) => {
        if (!open()) return true;
        const bytes = copyOf(chunk);
        state.backlog += 1;
        this.#send({ type: 'chunk', stream, bytes }, [bytes]);
        if (state.backlog >= HIGH_WATER) state.paused = true;
        return !state.paused;
      },
      end: () => {
        if (!open() || state.ending) return;
        state.ending = true;
        this.#send({ type: 'end', stream });
      },
      close: () => {
        if (!open()) return;
        this.#streams.delete(stream);
        this.#send({ type: 'close', stream });
      },
    };
  }

  list(body: Buffer, fields: FieldSelection | undefined): Promise<ListBody | null> {
    if (this.#closed) return Promise.reject(closedError());
    const id = this.#nextId++;
    const bytes = copyOf(body);
    return new Promise<ListBody | null>((resolve, reject) => {
      this.#lists.set(id, { resolve, reject });
      this.#send({ type: 'list', id, fields, bytes }, [bytes]);
    });
  }

  status(): DecodeThreadStatus {
    let backlog = 0;
    for (const stream of this.#streams.values()) backlog += stream.backlog;
    return { streams: this.#streams.size, backlog, restarts: this.#restarts };
  }

  /** Stops the worker; streams and LISTs still open fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = null;
    this.#failAll(closedError());
    await worker?.terminate();
  }

  #send(request: DecodeRequest, transfer: ArrayBuffer[] = []): void {
    if (this.#closed) return;
    (this.#worker ?? this.#spawn()).postMessage(request, transfer);
  }

  #spawn(): Worker {
    const entry = workerEntry(import.meta.url, 'decode-worker');
    const worker = new Worker(entry.filename, {
      ...entry.options,
      workerData: { niceness: this.#options.niceness ?? 0 } satisfies DecodeWorkerData,
    });
    this.#worker = worker;
    this.#options.onWorker?.(worker);
    worker.on('message', (reply: DecodeReply) => this.#receive(reply));
    const lost = (error: Error): void => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      this.#restarts += 1;
      this.#options.logger?.warn(
        { err: error, streams: this.#streams.size, lists: this.#lists.size },
        'The watch decoder thread stopped: its streams and LISTs fail and are retried',
      );
      this.#failAll(error);
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`The watch decoder thread exited with code ${code}`)));
    return worker;
  }

  #receive(reply: DecodeReply): void {
    if (reply.type === 'list') {
      const pending = this.#lists.get(reply.id);
      this.#lists.delete(reply.id);
      pending?.resolve(reply.body);
      return;
    }
    const state = this.#streams.get(reply.stream);
    if (state === undefined) return;
    if (!reply.ended) state.backlog -= 1;
    else this.#streams.delete(reply.stream);
    try {
      if (reply.events.length > 0) state.sink.onEvents(reply.events);
      if (reply.ended) state.sink.onEnded();
      else if (state.paused && state.backlog <= LOW_WATER) {
        state.paused = false;
        state.sink.onDrain();
      }
    } catch (error) {
      this.#streams.delete(reply.stream);
      this.#send({ type: 'close', stream: reply.stream });
      state.sink.onError(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #failAll(error: Error): void {
    const streams = [...this.#streams.values()];
    const lists = [...this.#lists.values()];
    this.#streams.clear();
    this.#lists.clear();
    for (const stream of streams) stream.sink.onError(error);
    for (const list of lists) list.reject(error);
  }
}

/** A copy of the bytes in an ArrayBuffer of their own, to transfer (a chunk may share a pooled buffer). */
function copyOf(chunk: Buffer): ArrayBuffer {
  const bytes = new Uint8Array(chunk.length);
  bytes.set(chunk);
  return bytes.buffer;
}

function closedError(): Error {
  return new Error('The watch decoder is closed');
}
