// The usage figures both telemetry paths share: per-sample seconds, weighted utilization and energy in
// the rings' integer units, and idle time judged per GPU and clock minute as each minute closes.
import { expect } from 'chai';
import { emptyUsage } from '../../../src/domain/gpu-usage.js';
import { METRIC_COUNT, METRIC_SLOT } from '../../../src/telemetry/rings/metric-codec.js';
import { addSampleUsage, checkUsageRules, IdleMinutes, type IdleMinute } from '../../../src/telemetry/sinks/usage-tally.js';
import { usageOf } from '../../support/gpu-usage.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 26, 8, 0, 0);
const PLAIN = { mig: false, xidError: false };

function values(utilization: number, power = NaN): Float64Array {
  const v = new Float64Array(METRIC_COUNT).fill(NaN);
  v[METRIC_SLOT.gpu_utilization] = utilization;
  v[METRIC_SLOT.power_usage] = power;
  return v;
}

/** Both halves together, as the paths use them: one usage for every workload. */
function tally(rules = { intervalSeconds: 15, idleThresholdPercent: 5 }) {
  const usage = emptyUsage();
  const idle: IdleMinute<string>[] = [];
  const onIdle = (minute: IdleMinute<string>) => {
    idle.push(minute);
    usage.idleSeconds += minute.idleSeconds;
  };
  const minutes = new IdleMinutes<string>(rules);
  return {
    usage,
    idle,
    minutes,
    add(gpuKey: string, at: number, v: Float64Array, facts = PLAIN, workloadId = 'job') {
      addSampleUsage(usage, v, facts, rules.intervalSeconds);
      minutes.add({ workloadId, gpuKey, at, values: v, tag: 'west' }, onIdle);
    },
    flush: (until: number) => minutes.closeEnded(until, onIdle),
  };
}

describe('telemetry: GPU usage figures (idle, efficiency, energy)', () => {
  it('does not call a minute idle whose mean is the threshold itself (4 % and 6 %: 5.0 at 5), and does one just below', () => {
    const t = tally();
    t.add('GPU-a', T0 + 10_000, values(4));
    t.add('GPU-a', T0 + 40_000, values(6));
    t.add('GPU-b', T0 + 10_000, values(4));
    t.add('GPU-b', T0 + 40_000, values(5.99)); // mean 4.995
    t.flush(T0 + MINUTE);
    expect(t.idle).to.deep.equal([{ workloadId: 'job', tag: 'west', end: T0 + MINUTE, idleSeconds: 30 }]);
  });

  it('counts 3 % for 10 minutes at 15 s on 2 GPUs as 2 × 600 idle seconds exactly', () => {
    const t = tally();
    for (let i = 0; i < 40; i += 1) {
      t.add('GPU-a', T0 + i * 15_000, values(3));
      t.add('GPU-b', T0 + i * 15_000, values(3));
    }
    // The last minute is still open until a flush at or after its end.
    expect(t.usage.idleSeconds).to.equal(2 * 540);
    t.flush(T0 + 10 * MINUTE);
    // 2 GPUs × 40 samples × 15 s; 300 (0.01 %) × 15 s per sample.
    expect(t.usage).to.deep.equal(usageOf({ utilSeconds: 1200, utilWeighted: 80 * 300 * 15, idleSeconds: 1200 }));
  });

  it('weights utilization by the seconds each sample stands for, in the rings\' 0.01 % units', () => {
    const t = tally({ intervalSeconds: 10, idleThresholdPercent: 5 });
    for (const util of [50, 100, 33.33, 0]) t.add('GPU-a', T0, values(util));
    // (5000 + 10000 + 3333 + 0) × 10 s over 40 s: 45.8325 % efficiency.
    expect(t.usage).to.deep.equal(usageOf({ utilSeconds: 40, utilWeighted: 183_330 }));
    expect(t.usage.utilWeighted / (t.usage.utilSeconds * 100)).to.equal(45.8325);
  });

  it('adds energy in tenths of a joule: 300.0 W for 4 samples of 15 s is 18,000 J', () => {
    const t = tally();
    for (let i = 0; i < 4; i += 1) t.add('GPU-a', T0 + i * 15_000, values(NaN, 300));
    expect(t.usage).to.deep.equal(usageOf({ powerSeconds: 60, energyDj: 180_000 }));
  });

  it('takes no power figures from a MIG instance (its power is the whole GPU\'s), and its utilization all the same', () => {
    const t = tally();
    t.add('GPU-a/13', T0, values(40, 300), { mig: true, xidError: false });
    expect(t.usage).to.deep.equal(usageOf({ utilSeconds: 15, utilWeighted: 4000 * 15 }));
  });

  it('counts one GPU error per sample reporting a new XID', () => {
    const t = tally();
    t.add('GPU-a', T0, values(NaN), { mig: false, xidError: true });
    t.add('GPU-a', T0 + 15_000, values(NaN), PLAIN);
    expect(t.usage).to.deep.equal(usageOf({ gpuErrors: 1 }));
  });

  it('closes a minute when a later minute\'s sample of the same GPU comes, not for another GPU\'s or workload\'s', () => {
    const t = tally();
    t.add('GPU-a', T0 + 10_000, values(1));
    t.add('GPU-b', T0 + 70_000, values(1));
    t.add('GPU-a', T0 + 70_000, values(1), PLAIN, 'other-job');
    expect(t.idle).to.deep.equal([]);
    t.add('GPU-a', T0 + 61_000, values(80));
    expect(t.idle).to.deep.equal([{ workloadId: 'job', tag: 'west', end: T0 + MINUTE, idleSeconds: 15 }]);
    expect(t.minutes.openMinutes).to.equal(3);
  });

  it('closes a minute at a flush at or after its end, not before, and keeps a sample that comes after out of it', () => {
    const t = tally();
    t.add('GPU-a', T0 + 10_000, values(1));
    t.flush(T0 + MINUTE - 1);
    expect(t.idle).to.deep.equal([]);
    t.flush(T0 + MINUTE);
    expect(t.idle.map((m) => m.idleSeconds)).to.deep.equal([15]);
    expect(t.minutes.hasOpen('job')).to.equal(false);
    // A scrape of a tick that started before the minute's end, ingested after the flush.
    t.add('GPU-b', T0 + 59_000, values(1));
    t.add('GPU-a', T0 + 59_500, values(1));
    t.flush(T0 + 2 * MINUTE);
    expect(t.idle.map((m) => m.idleSeconds)).to.deep.equal([15]);
    expect(t.usage.utilSeconds).to.equal(45);
  });

  it('closes every minute, ended or not, when told nothing more will come', () => {
    const t = tally();
    t.add('GPU-a', T0 + 10_000, values(1));
    t.minutes.closeAll((minute) => t.idle.push(minute));
    expect(t.idle.map((m) => [m.end, m.idleSeconds])).to.deep.equal([[T0 + MINUTE, 15]]);
    expect(t.minutes.openMinutes).to.equal(0);
  });

  it('never calls a minute idle at a threshold of 0, not even at 0 %', () => {
    const t = tally({ intervalSeconds: 15, idleThresholdPercent: 0 });
    t.add('GPU-a', T0, values(0));
    t.flush(T0 + MINUTE);
    expect(t.usage).to.deep.equal(usageOf({ utilSeconds: 15 }));
  });

  it('refuses an interval that is not a positive whole number of seconds and a threshold outside 0..100', () => {
    expect(() => checkUsageRules({ intervalSeconds: 1.5, idleThresholdPercent: 5 })).to.throw('Cannot tally GPU usage: the scrape interval must be a positive whole number of seconds, got 1.5');
    expect(() => checkUsageRules({ intervalSeconds: 15, idleThresholdPercent: 101 })).to.throw('Cannot tally GPU usage: the idle threshold must be a percentage from 0 to 100, got 101');
    expect(() => checkUsageRules({ intervalSeconds: 15, idleThresholdPercent: NaN })).to.throw('got NaN');
  });
});
