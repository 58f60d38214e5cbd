// CPU seconds of every process of a benchmark run, read together before and after a phase, so that a
// figure that misses its target can name the process that held a whole core: the service, the
// benchmark's own process (probe, scrapes), or a simulated cluster driving its churn.

/** CPU seconds used so far, by process name; null where it cannot be read (off Linux, or exited). */
export type CpuReading = Record<string, number | null>;

/** A process's CPU seconds so far. */
export type CpuMeter = () => number | null;

/** This process's CPU seconds (user + system) so far. */
export function benchCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

export function readCpu(meters: Readonly<Record<string, CpuMeter>>): CpuReading {
  return Object.fromEntries(Object.entries(meters).map(([name, meter]) => [name, meter()]));
}

/** CPU seconds each process used between two readings (two decimals; /proc counts in hundredths). */
export function cpuBetween(before: CpuReading, after: CpuReading): CpuReading {
  return Object.fromEntries(
    Object.entries(after).map(([name, to]) => {
      const from = before[name];
      return [name, to === null || from === null || from === undefined ? null : Math.round((to - from) * 100) / 100];
    }),
  );
}

/** Processes that used at least `share` of one core over `seconds`, e.g. "service 98 %". */
export function saturatedOf(spent: CpuReading, seconds: number, share = 0.9): string[] {
  if (seconds <= 0) return [];
  return Object.entries(spent)
    .filter((entry): entry is [string, number] => entry[1] !== null && entry[1] / seconds >= share)
    .map(([name, cpu]) => `${name} ${Math.round((cpu / seconds) * 100)} %`);
}
