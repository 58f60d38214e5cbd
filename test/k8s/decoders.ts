// Runs a suite twice: with the stream decoded on the main thread, and on the decode worker (one
// DecodeThread for the suite). What a reflector or a watch delivers must not depend on where it was
// decoded.
import { DecodeThread } from '../../src/k8s/decode/decode-thread.js';
import type { ObjectDecoder } from '../../src/k8s/decode/decoder.js';

export function eachDecoder(suite: (decoder: () => ObjectDecoder | undefined) => void): void {
  for (const threaded of [false, true]) {
    describe(threaded ? 'decoded on the decode worker' : 'decoded on the main thread', () => {
      let thread: DecodeThread | undefined;
      before(() => {
        if (threaded) thread = new DecodeThread();
      });
      after(async () => {
        await thread?.close();
        thread = undefined;
      });
      suite(() => thread);
    });
  }
}
