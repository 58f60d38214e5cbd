// A watch stream's bytes → its lines (one JSON event each). Chunks end anywhere, inside a line and
// inside a multi-byte character alike; a newline byte (0x0A) never occurs inside a UTF-8 sequence,
// so cutting the bytes at newlines and decoding each whole line is always safe.
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export class LineSplitter {
  /** The start of a line that no chunk has ended yet. */
  #carry: Buffer[] = [];
  #carriedBytes = 0;

  /** The lines `chunk` completes, without their line endings; empty lines are left out. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      let line = chunk.subarray(start, end);
      if (this.#carry.length > 0) {
        line = Buffer.concat([...this.#carry, line], this.#carriedBytes + line.length);
        this.#carry = [];
        this.#carriedBytes = 0;
      }
      this.#add(lines, line);
      start = end + 1;
    }
    if (start < chunk.length) {
      this.#carry.push(chunk.subarray(start));
      this.#carriedBytes += chunk.length - start;
    }
    return lines;
  }

  /** The last line, when the stream ended without a newline after it. */
  end(): string[] {
    const lines: string[] = [];
    if (this.#carry.length > 0) this.#add(lines, Buffer.concat(this.#carry, this.#carriedBytes));
    this.#carry = [];
    this.#carriedBytes = 0;
    return lines;
  }

  /** Bytes held of a line not yet complete. */
  get pendingBytes(): number {
    return this.#carriedBytes;
  }

  #add(lines: string[], line: Buffer): void {
    const length = line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN ? line.length - 1 : line.length;
    if (length > 0) lines.push(line.toString('utf8', 0, length));
  }
}
