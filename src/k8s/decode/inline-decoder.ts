// Decoding on the calling thread: each chunk's lines are parsed as it is pushed, and the sink hears
// them before push() returns. For a service with a core to spare for nothing else (decode_worker:
// false), for the ConfigMap watches, and for tests that want no thread.
import type { FieldSelection } from '../../domain/field-selection.js';
import { LineSplitter } from '../line-splitter.js';
import { decodeLine, decodeList } from './decode-lines.js';
import type { DecodedEvent, EventSink, EventStream, ListBody, ObjectDecoder } from './decoder.js';

export class InlineDecoder implements ObjectDecoder {
  events(fields: FieldSelection | undefined, sink: EventSink): EventStream {
    const lines = new LineSplitter();
    let open = true;
    const deliver = (texts: string[]): void => {
      const events: DecodedEvent[] = [];
      for (const text of texts) {
        const event = decodeLine(text, fields);
        if (event !== undefined) events.push(event);
      }
      if (open && events.length > 0) sink.onEvents(events);
    };
    return {
      push: (chunk) => {
        if (open) deliver(lines.push(chunk));
        return true;
      },
      end: () => {
        if (!open) return;
        deliver(lines.end());
        if (open) sink.onEnded();
        open = false;
      },
      close: () => {
        open = false;
      },
    };
  }

  list(body: Buffer, fields: FieldSelection | undefined): Promise<ListBody | null> {
    return Promise.resolve(decodeList(body.toString('utf8'), fields));
  }
}

/** The one decoder of this thread, for the watches and LISTs given none. */
export const INLINE_DECODER = new InlineDecoder();
