// The package ships no types. Only what the parser test and bench/parse.ts read is declared: they
// use it as an independent oracle for parseExposition. Values stay the text as written.
declare module 'parse-prometheus-text-format' {
  interface OracleSample {
    value?: string;
    labels?: Record<string, string>;
    timestamp_ms?: string;
    /** Histograms and summaries only: the family's samples folded into one object. */
    buckets?: Record<string, string>;
    quantiles?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  interface OracleFamily {
    name: string;
    help: string;
    type: string;
    metrics: OracleSample[];
  }
  function parsePrometheusTextFormat(text: string): OracleFamily[];
  export = parsePrometheusTextFormat;
}
