// Messages between the main thread and the decode worker (decode-thread.ts, decode-worker.ts).
import type { FieldSelection } from '../../domain/field-selection.js';
import type { DecodedEvent, ListBody } from './decoder.js';

/** What the worker is started with (worker_threads `workerData`). */
export interface DecodeWorkerData {
  /** The thread's scheduling niceness (runtime/thread-priority.ts). */
  niceness: number;
}

export type DecodeRequest =
  | { type: 'open'; stream: number; fields: FieldSelection | undefined }
  /** A chunk of the stream's bytes, transferred. */
  | { type: 'chunk'; stream: number; bytes: ArrayBuffer }
  | { type: 'end'; stream: number }
  | { type: 'close'; stream: number }
  | { type: 'list'; id: number; fields: FieldSelection | undefined; bytes: ArrayBuffer };

export type DecodeReply =
  /** The events a chunk completed (one reply per chunk, empty or not), or the last ones with `ended`. */
  | { type: 'events'; stream: number; events: DecodedEvent[]; ended: boolean }
  | { type: 'list'; id: number; body: ListBody | null };
