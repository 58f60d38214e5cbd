// The CPUs the service counts for itself, from the cgroup files a container runtime writes.
import { expect } from 'chai';
import { availableParallelism } from 'node:os';
import { availableCpus } from '../../src/runtime/cpu-budget.js';

/** A file system of these paths; any other path is missing. */
const files = (entries: Record<string, string>) => (path: string): string => {
  const text = entries[path];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
  return text;
};

describe('runtime/cpu budget', () => {
  it('takes a cgroup v2 quota (a container limit of 1.5 CPUs) over the node\'s 64 cores', () => {
    expect(availableCpus(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': '150000 100000\n' }), 64)).to.equal(1.5);
  });

  it('reads the quota of the process\'s own cgroup v2 path when it is visible there', () => {
    const read = files({ '/proc/self/cgroup': '0::/kubepods/pod1/c1\n', '/sys/fs/cgroup/kubepods/pod1/c1/cpu.max': '200000 100000', '/sys/fs/cgroup/cpu.max': 'max 100000' });
    expect(availableCpus(read, 64)).to.equal(2);
  });

  it('counts every core when cgroup v2 sets no quota ("max")', () => {
    expect(availableCpus(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': 'max 100000\n' }), 8)).to.equal(8);
  });

  it('takes a cgroup v1 quota over its period, and counts every core for -1', () => {
    const v1 = (quota: string) => files({ '/proc/self/cgroup': '4:memory:/x\n2:cpuacct,cpu:/\n', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': quota, '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' });
    expect(availableCpus(v1('300000\n'), 16)).to.equal(3);
    expect(availableCpus(v1('-1\n'), 16)).to.equal(16);
  });

  it('never counts more than the cores it may run on, and counts them all with no cgroup to read', () => {
    expect(availableCpus(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': '800000 100000' }), 2)).to.equal(2);
    expect(availableCpus(files({}), 4)).to.equal(4);
  });

  it('gives this machine a count between 0 and its cores', () => {
    const cpus = availableCpus();
    expect(cpus).to.be.above(0).and.at.most(availableParallelism());
  });
});
