// What every benchmark hands back to bench/run.ts: where its results went, whether a request failed,
// and the table and notes of the summary it prints.
export interface BenchOutcome {
  name: string;
  resultsFile: string;
  /** Non-2xx responses plus connection errors, over every run. */
  requestErrors: number;
  table: { header: string[]; rows: string[][] };
  notes: string[];
}
