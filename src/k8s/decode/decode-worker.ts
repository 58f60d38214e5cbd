// The decode worker (decode-thread.ts): splits each watch stream's bytes into lines and parses them,
// parses LIST pages, and sends back the selected fields of each object. One reply per chunk, in the
// order the chunks came, so the main thread counts what is still being decoded.
import { parentPort, workerData } from 'node:worker_threads';
import type { FieldSelection } from '../../domain/field-selection.js';
import { niceThisThread } from '../../runtime/thread-priority.js';
import { LineSplitter } from '../line-splitter.js';
import { decodeLine, decodeList } from './decode-lines.js';
import type { DecodedEvent } from './decoder.js';
import type { DecodeReply, DecodeRequest, DecodeWorkerData } from './decode-protocol.js';

interface StreamState {
  lines: LineSplitter;
  fields: FieldSelection | undefined;
}

const port = parentPort;
if (port === null) throw new Error('decode-worker.ts runs as a worker thread only');
niceThisThread((workerData as DecodeWorkerData).niceness);
const streams = new Map<number, StreamState>();

function decodeAll(texts: string[], fields: FieldSelection | undefined): DecodedEvent[] {
  const events: DecodedEvent[] = [];
  for (const text of texts) {
    const event = decodeLine(text, fields);
    if (event !== undefined) events.push(event);
  }
  return events;
}

function reply(message: DecodeReply): void {
  port?.postMessage(message);
}

port.on('message', (request: DecodeRequest) => {
  switch (request.type) {
    case 'open':
      streams.set(request.stream, { lines: new LineSplitter(), fields: request.fields });
      return;
    case 'chunk': {
      const state = streams.get(request.stream);
      const events = state === undefined ? [] : decodeAll(state.lines.push(Buffer.from(request.bytes)), state.fields);
      return reply({ type: 'events', stream: request.stream, events, ended: false });
    }
    case 'end': {
      const state = streams.get(request.stream);
      streams.delete(request.stream);
      const events = state === undefined ? [] : decodeAll(state.lines.end(), state.fields);
      return reply({ type: 'events', stream: request.stream, events, ended: true });
    }
    case 'close':
      streams.delete(request.stream);
      return;
    case 'list':
      return reply({ type: 'list', id: request.id, body: decodeList(Buffer.from(request.bytes).toString('utf8'), request.fields) });
  }
});
