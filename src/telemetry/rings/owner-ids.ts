// Workload ids as the 32-bit owner numbers the rings store. Numbers only grow (wrapping after 2^32 − 1
// and skipping 0, which means "no workload"), so a number is never reused while a ring can still
// hold it: that would take four billion workloads inside one 24-hour ring span.
export class OwnerIds {
  readonly #byId = new Map<string, number>();
  readonly #byNumber = new Map<number, string>();
  #next = 1;

  /** The workload's number, assigning one on first sight. */
  numberOf(workloadId: string): number {
    let number = this.#byId.get(workloadId);
    if (number === undefined) {
      number = this.#next;
      this.#next = this.#next === 0xffffffff ? 1 : this.#next + 1;
      this.#byId.set(workloadId, number);
      this.#byNumber.set(number, workloadId);
    }
    return number;
  }

  /** The workload's number if it has one. */
  find(workloadId: string): number | undefined {
    return this.#byId.get(workloadId);
  }

  idOf(number: number): string | undefined {
    return this.#byNumber.get(number);
  }

  /** Drops a workload whose samples have aged out of every ring. */
  release(workloadId: string): void {
    const number = this.#byId.get(workloadId);
    if (number === undefined) return;
    this.#byId.delete(workloadId);
    this.#byNumber.delete(number);
  }

  get size(): number {
    return this.#byId.size;
  }
}
