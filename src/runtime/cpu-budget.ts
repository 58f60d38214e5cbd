// How many CPUs this process may use: the cores it may run on (os.availableParallelism), or fewer
// when its cgroup has a CPU quota (a container's CPU limit: cgroup v2 `cpu.max`, v1
// `cpu.cfs_quota_us` over `cpu.cfs_period_us`). Node reports the node's cores inside a container with
// a limit of two, and a choice made for sixty-four would be wrong there.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export type ReadText = (path: string) => string;

const readText: ReadText = (path) => readFileSync(path, 'utf8');

/** CPUs available to this process, fractional under a quota (1.5 for `150000 100000`), at least 0.01. */
export function availableCpus(read: ReadText = readText, cores: number = availableParallelism()): number {
  const quota = cgroupCpuQuota(read);
  return quota === null ? cores : Math.max(0.01, Math.min(cores, quota));
}

function attempt(read: ReadText, path: string): string | null {
  try {
    return read(path);
  } catch {
    return null;
  }
}

/** The quota in CPUs of the cgroup this process is in, else null (none set, or no cgroup to read). */
function cgroupCpuQuota(read: ReadText): number | null {
  const membership = attempt(read, '/proc/self/cgroup');
  if (membership === null) return null;
  for (const line of membership.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1).trim();
    const under = path === '/' ? '' : path;
    if (controllers === '') {
      const quota = cpuMax(attempt(read, `/sys/fs/cgroup${under}/cpu.max`) ?? attempt(read, '/sys/fs/cgroup/cpu.max'));
      if (quota !== null) return quota;
    } else if (controllers.split(',').includes('cpu')) {
      for (const mount of ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct']) {
        const dir = attempt(read, `${mount}${under}/cpu.cfs_quota_us`) === null ? mount : `${mount}${under}`;
        const quota = cfsQuota(attempt(read, `${dir}/cpu.cfs_quota_us`), attempt(read, `${dir}/cpu.cfs_period_us`));
        if (quota !== null) return quota;
      }
    }
  }
  return null;
}

/** cgroup v2 `cpu.max`: "max 100000" (no quota) or "150000 100000". */
function cpuMax(text: string | null): number | null {
  const [quota, period] = (text ?? '').trim().split(/\s+/);
  return ratio(quota, period);
}

/** cgroup v1: quota -1 means none. */
function cfsQuota(quota: string | null, period: string | null): number | null {
  return ratio(quota?.trim(), period?.trim());
}

function ratio(quota: string | undefined, period: string | undefined): number | null {
  if (quota === undefined || period === undefined || !/^\d+$/.test(quota) || !/^\d+$/.test(period)) return null;
  const q = Number(quota);
  const p = Number(period);
  return q > 0 && p > 0 ? q / p : null;
}
