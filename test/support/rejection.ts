// The error a promise rejects with; fails the test when it resolves. chai's `to.throw` only sees
// synchronous throws, and the store's writes are promises (they may run on PostgreSQL).
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if ('value' in outcome) throw new Error(`Expected a rejection, got ${JSON.stringify(outcome.value)}`);
  if (!(outcome.error instanceof Error)) throw new Error(`Expected an Error, got ${String(outcome.error)}`);
  return outcome.error;
}
