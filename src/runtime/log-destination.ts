// The service's log destination: pino's asynchronous stdout, whose writes run on libuv's thread pool so
// that a slow log reader never blocks the event loop (a synchronous stdout sleeps 100 ms on a full
// pipe), and an end that writes every line logged so far, in order, before the process exits. Without
// it, the flush at exit wrote the queued lines while the one before them still waited for a pool
// thread, and that one came out last: "stopped" before "draining requests".
import { once } from 'node:events';
import { writeSync } from 'node:fs';
import { pino } from 'pino';

/** How long an exit waits for the log reader; a reader that takes no more must not hold the process. */
const END_TIMEOUT_MS = 2_000;

export class StdoutLogDestination implements pino.DestinationStream {
  readonly #stream = pino.destination({ dest: 1, sync: false });
  #ending: Promise<void> | undefined;
  #ended = false;
  /** Lines logged while the end writes out the rest: they follow it. */
  readonly #late: string[] = [];

  write(line: string): void {
    if (this.#ended) writeLate(line);
    else if (this.#ending !== undefined) this.#late.push(line);
    else this.#stream.write(line);
  }

  /** Writes out what is queued and in flight, then anything logged meanwhile; resolves when it is all out. */
  end(): Promise<void> {
    this.#ending ??= (async () => {
      // A write error ends the wait too: the lines are lost either way, and the exit must go on.
      const closed = once(this.#stream, 'close').catch(() => undefined);
      this.#stream.end();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, END_TIMEOUT_MS).unref()))]);
      clearTimeout(timer);
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
