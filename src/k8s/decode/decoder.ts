// Turning the bytes of watch streams and LIST pages into the objects the reflector delivers, either
// on the main thread (inline-decoder.ts) or on a thread of its own (decode-thread.ts). Both keep of
// each object only the fields selected for its kind (domain/field-selection.ts), so what the
// consumers see does not depend on where the decoding ran.
import type { FieldSelection } from '../../domain/field-selection.js';

/** One line of a watch stream: its `type` (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) and `object`. */
export interface DecodedEvent {
  type: string;
  object: unknown;
}

/** Where one watch stream's events go, in stream order. */
export interface EventSink {
  onEvents(events: readonly DecodedEvent[]): void;
  /** Every event of the stream was delivered (after end()). */
  onEnded(): void;
  /** The decoder failed (its thread stopped): the stream delivers nothing more. */
  onError(error: Error): void;
  /** The stream's backlog fell low again after a push() that returned false. */
  onDrain(): void;
}

export interface EventStream {
  /** Decodes a chunk of the stream; false asks the caller to stop reading until onDrain. */
  push(chunk: Buffer): boolean;
  /** The stream's bytes ended: the last line is decoded, then onEnded. */
  end(): void;
  /** Nothing more of this stream is wanted. */
  close(): void;
}

/** A LIST page: its version, continue token and items (selected). */
export interface ListBody {
  resourceVersion: string | undefined;
  continue: string | undefined;
  items: unknown[];
}

export interface ObjectDecoder {
  /** A watch stream whose objects of ADDED, MODIFIED and DELETED events keep `fields` (all when undefined). */
  events(fields: FieldSelection | undefined, sink: EventSink): EventStream;
  /** A LIST page's body; null when it is not a JSON object. */
  list(body: Buffer, fields: FieldSelection | undefined): Promise<ListBody | null>;
}
