// Posting a worker's message to the main thread, for the read and the write workers alike.
import type { MessagePort } from 'node:worker_threads';
import { serializeError } from './worker-errors.js';
import type { WorkerMessage } from './read-protocol.js';

export function post(port: MessagePort, message: WorkerMessage): void {
  try {
    port.postMessage(message);
  } catch (error) {
    // A result that cannot be cloned (a bug: results are plain data) must still answer its call.
    if (message.type !== 'reply') throw error;
    port.postMessage({ type: 'reply', id: message.id, ok: false, error: serializeError(error) } satisfies WorkerMessage);
  }
}
