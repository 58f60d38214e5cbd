// The service's log destination: pino's asynchronous stdout, whose writes run on libuv's thread pool so
// that a slow log reader never blocks the event loop (a synchronous stdout sleeps 100 ms on a full
// pipe), and an end that writes every line logged so far, in order, before the process exits. Without
// it, the flush at exit wrote the queued lines while the one before them still waited for a pool
// thread, and that one came out last: "stopped" before "draining requests".
import { once } from 'node:events';
import { writeSync } from 'node:fs';
import { pino } from 'pino';

export class StdoutLogDestination implements pino.DestinationStream {
  readonly #stream = pino.destination({ dest: 1, sync: false });
  /** How long end() waits for the log reader; a reader that takes no more must not hold the exit. */
  readonly #endTimeoutMs: number;
  #ending: Promise<void> | undefined;
  #ended = false;
  /** Lines logged while the end writes out the rest: they follow it. */
  readonly #late: string[] = [];

  constructor(options: { endTimeoutMs?: number } = {}) {
    this.#endTimeoutMs = options.endTimeoutMs ?? 2_000;
  }

  write(line: string): void {
    if (this.#ended) writeLate(line);
    else if (this.#ending !== undefined) this.#late.push(line);
    else this.#stream.write(line);
  }

  /**
   * Writes out what is queued and in flight, then anything logged meanwhile; resolves when it is all
   * out. Past the time limit, the lines logged meanwhile are written at once, maybe ahead of the rest.
   */
  end(): Promise<void> {
    this.#ending ??= (async () => {
      // A write error or the time limit ends the wait too: the exit must go on.
      const closed = once(this.#stream, 'close', { signal: AbortSignal.timeout(this.#endTimeoutMs) }).catch(() => undefined);
      this.#stream.end();
      await closed;
      this.#ended = true;
      for (const line of this.#late.splice(0)) writeLate(line);
    })();
    return this.#ending;
  }
}

function writeLate(line: string): void {
  try {
    writeSync(1, line);
  } catch {
    // stdout is full or gone at exit: nothing is left to tell.
  }
}
