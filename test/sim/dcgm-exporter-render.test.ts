import { createRequire } from 'node:module';
import { expect } from 'chai';
import { LoopbackIps } from '../../sim/dcgm-exporter/loopback-ips.js';
import { renderDcgmMetrics } from '../../sim/dcgm-exporter/render.js';
import type { SimGpu, SimNodeGpus } from '../../sim/dcgm-exporter/types.js';
import { readExporterCapture } from '../fixtures/exporters/exporter-fixtures.js';

// The oracle: an independent exposition parser (a CommonJS package without type declarations).
interface PromFamily {
  name: string;
  help: string;
  type: string;
  metrics: { value: string; labels?: Record<string, string> }[];
}
const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => PromFamily[];

const UUID_A = 'GPU-34319582-d595-d1c7-d1d2-179bcfa61660';
const UUID_B = 'GPU-9ef1b6d0-3643-5dd7-b823-c0ec20dcf2d5';

function node(gpus: SimGpu[]): SimNodeGpus {
  return { hostname: 'gpu-node-1', gpus };
}

/** Label names of a sample line, in the order written. */
function labelNames(line: string): string[] {
  return [...line.matchAll(/([A-Za-z_][A-Za-z0-9_]*)="(?:[^"\\]|\\.)*"/g)].map((m) => m[1] ?? '');
}

function samples(text: string, metric: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${metric}{`));
}

/** The value after the label set (label values may contain spaces, e.g. modelName). */
function sampleValue(line: string | undefined): number {
  return line === undefined ? NaN : Number(line.slice(line.lastIndexOf('} ') + 2));
}

function isSubsequence(needle: string[], haystack: string[]): boolean {
  let i = 0;
  for (const item of haystack) if (item === needle[i]) i += 1;
  return i === needle.length;
}

describe('simulated dcgm-exporter: rendering', () => {
  it('renders text the oracle parser reads: one family per field with help and type, one sample per GPU', () => {
    const text = renderDcgmMetrics(node([
      { index: 0, uuid: UUID_A },
      { index: 1, uuid: UUID_B },
    ]));
    const families = parsePrometheus(text);
    expect(families).to.have.length(15);
    for (const family of families) {
      expect(family.help, family.name).to.not.equal('');
      expect(['GAUGE', 'COUNTER']).to.include(family.type);
      expect(family.metrics.map((m) => m.labels?.UUID)).to.deep.equal([UUID_A, UUID_B]);
      for (const m of family.metrics) expect(Number.isFinite(Number(m.value)), `${family.name} ${m.value}`).to.be.true;
    }
    expect(families.find((f) => f.name === 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION')?.type).to.equal('COUNTER');
    expect(text.endsWith('\n')).to.be.true;
  });

  it('writes v4 labels in the exporter template order, pod attribution in sorted key order', () => {
    const text = renderDcgmMetrics(node([{ index: 0, uuid: UUID_A, pod: { pod: 'train-0', namespace: 'ml', container: 'main' } }]));
    const [line = ''] = samples(text, 'DCGM_FI_DEV_GPU_UTIL');
    expect(labelNames(line)).to.deep.equal([
      'gpu', 'UUID', 'pci_bus_id', 'device', 'modelName', 'hostname', 'DCGM_FI_DRIVER_VERSION', 'container', 'namespace', 'pod',
    ]);
    expect(line).to.include('gpu="0",UUID="GPU-34319582-d595-d1c7-d1d2-179bcfa61660",pci_bus_id="00000000:18:00.0",device="nvidia0"');
    expect(line).to.include('hostname="gpu-node-1"');
    expect(line).to.include('container="main",namespace="ml",pod="train-0"}');
  });

  it('writes v3 labels: Hostname capitalised, no pci_bus_id, pod label names configurable', () => {
    const gpus = [{ index: 0, uuid: UUID_A, pod: { pod: 'train-0', namespace: 'ml', container: 'main' } }];
    const [plain = ''] = samples(renderDcgmMetrics(node(gpus), { labelStyle: 'v3' }), 'DCGM_FI_DEV_GPU_UTIL');
    expect(labelNames(plain)).to.deep.equal(['gpu', 'UUID', 'device', 'modelName', 'Hostname', 'DCGM_FI_DRIVER_VERSION', 'container', 'namespace', 'pod']);
    const old = renderDcgmMetrics(node(gpus), {
      labelStyle: 'v3',
      podLabelNames: { pod: 'pod_name', namespace: 'pod_namespace', container: 'container_name' },
    });
    const [line = ''] = samples(old, 'DCGM_FI_DEV_GPU_UTIL');
    expect(line).to.include(',container_name="main",pod_name="train-0",pod_namespace="ml"}');
  });

  it('leaves pod labels out for an unassigned GPU and the container label out when the pod has none', () => {
    const text = renderDcgmMetrics(node([
      { index: 0, uuid: UUID_A },
      { index: 1, uuid: UUID_B, pod: { pod: 'p', namespace: 'n' } },
    ]));
    const [free = '', used = ''] = samples(text, 'DCGM_FI_DEV_GPU_UTIL');
    expect(labelNames(free)).to.not.include('pod');
    expect(labelNames(used).slice(-2)).to.deep.equal(['namespace', 'pod']);
  });

  it('renders a MIG GPU as parent DEV series without pod labels plus per-instance PROF and FB series with the pod', () => {
    const text = renderDcgmMetrics(node([
      {
        index: 0,
        uuid: UUID_A,
        modelName: 'NVIDIA A100-SXM4-80GB',
        mig: [
          { profile: '1g.10gb', instanceId: 13, pod: { pod: 'infer-a', namespace: 'serving', container: 'server' } },
          { profile: '3g.40gb', instanceId: 2 },
        ],
      },
    ]));
    const families = parsePrometheus(text);
    const byName = (name: string): PromFamily['metrics'] => families.find((f) => f.name === name)?.metrics ?? [];
    // The parent: device fields, no instance labels, never attributed; no utilisation in MIG mode.
    expect(byName('DCGM_FI_DEV_GPU_TEMP')).to.have.length(1);
    expect(byName('DCGM_FI_DEV_GPU_TEMP')[0]?.labels).to.not.have.any.keys('GPU_I_ID', 'pod');
    expect(byName('DCGM_FI_DEV_GPU_UTIL')).to.have.length(0);
    // Each instance: PROF and FB fields with GPU_I_* labels and its own pod.
    const gr = byName('DCGM_FI_PROF_GR_ENGINE_ACTIVE');
    expect(gr.map((m) => m.labels?.GPU_I_ID)).to.deep.equal([undefined, '13', '2']);
    expect(gr[1]?.labels).to.include({ GPU_I_PROFILE: '1g.10gb', pod: 'infer-a', namespace: 'serving', container: 'server' });
    expect(gr[2]?.labels).to.not.have.any.keys('pod');
    const fb = byName('DCGM_FI_DEV_FB_USED').concat(byName('DCGM_FI_DEV_FB_FREE')).filter((m) => m.labels?.GPU_I_ID === '13');
    expect(fb.reduce((sum, m) => sum + Number(m.value), 0)).to.equal(9728);
    const [instanceLine = ''] = samples(text, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE').filter((l) => l.includes('GPU_I_ID="13"'));
    expect(labelNames(instanceLine)).to.deep.equal([
      'gpu', 'UUID', 'pci_bus_id', 'device', 'modelName', 'GPU_I_PROFILE', 'GPU_I_ID', 'hostname', 'DCGM_FI_DRIVER_VERSION', 'container', 'namespace', 'pod',
    ]);
  });

  it('agrees with the A100 MIG capture on label order and on which fields an instance reports', () => {
    const fixture = readExporterCapture('dcgm/a100-mig-1g.5gb-dcp-metrics-cloud-native-docs.txt');
    const text = renderDcgmMetrics({ hostname: 'ub20-a100-k8s', gpus: [{ index: 0, uuid: UUID_A, mig: [{ profile: '1g.5gb', instanceId: 13 }] }] }, { labelStyle: 'v3' });
    const instanceFields = (t: string): Set<string> =>
      new Set(t.split('\n').filter((l) => l.includes('GPU_I_ID=')).map((l) => l.slice(0, l.indexOf('{'))));
    const real = instanceFields(fixture);
    const ours = instanceFields(text);
    for (const field of real) if (field.startsWith('DCGM_FI_PROF_') || field === 'DCGM_FI_DEV_XID_ERRORS') expect(ours, field).to.include(field);
    expect(real).to.not.include('DCGM_FI_DEV_GPU_UTIL');
    expect(ours).to.not.include('DCGM_FI_DEV_GPU_UTIL');
    const realLine = fixture.split('\n').find((l) => l.startsWith('DCGM_FI_PROF_GR_ENGINE_ACTIVE{') && l.includes('GPU_I_ID')) ?? '';
    const ourLine = samples(text, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE').find((l) => l.includes('GPU_I_ID')) ?? '';
    expect(isSubsequence(labelNames(realLine), labelNames(ourLine)), `${labelNames(realLine)} in ${labelNames(ourLine)}`).to.be.true;
    // 1g.5gb instances report 4864 MiB on A100s.
    const fb = ['DCGM_FI_DEV_FB_USED', 'DCGM_FI_DEV_FB_FREE'].map((name) => sampleValue(samples(text, name).find((l) => l.includes('GPU_I_ID'))));
    expect(fb[0] + fb[1]).to.equal(4864);
  });

  it('agrees with the T4 capture on help texts, types and family order', () => {
    // Read with a regex: the oracle rejects the capture's help-less `# HELP NAME` lines.
    const headers = (text: string): Map<string, { help: string; type: string }> => {
      const found = new Map<string, { help: string; type: string }>();
      for (const [, name = '', help = ''] of text.matchAll(/^# HELP (\S+) ?(.*)$/gm)) found.set(name, { help, type: '' });
      for (const [, name = '', type = ''] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        const entry = found.get(name);
        if (entry !== undefined) entry.type = type;
      }
      return found;
    };
    const real = headers(readExporterCapture('dcgm/datadog-integrations-core-dcgm-tests-fixtures-metrics.txt'));
    const ours = headers(renderDcgmMetrics(node([{ index: 0, uuid: UUID_A }])));
    // Only the real T4 capture at the top of the file has help texts; the dummy block has none.
    const shared = [...ours.keys()].filter((name) => (real.get(name)?.help ?? '') !== '');
    expect(shared.length).to.be.greaterThan(8);
    for (const name of shared) expect(ours.get(name), name).to.deep.equal(real.get(name));
    expect(shared).to.deep.equal([...real.keys()].filter((name) => shared.includes(name)));
  });

  it('prints power and PROF ratios with six decimals and integer fields without', () => {
    const text = renderDcgmMetrics(node([
      { index: 0, uuid: UUID_A, values: { DCGM_FI_DEV_POWER_USAGE: 409.692, DCGM_FI_PROF_GR_ENGINE_ACTIVE: 0.99563, DCGM_FI_DEV_GPU_UTIL: 97, DCGM_FI_DEV_FB_USED: 4845.4 } },
    ]));
    expect(samples(text, 'DCGM_FI_DEV_POWER_USAGE')[0]).to.match(/\} 409\.692000$/);
    expect(samples(text, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE')[0]).to.match(/\} 0\.995630$/);
    expect(samples(text, 'DCGM_FI_DEV_GPU_UTIL')[0]).to.match(/\} 97$/);
    expect(samples(text, 'DCGM_FI_DEV_FB_USED')[0]).to.match(/\} 4845$/);
    expect(samples(text, 'DCGM_FI_DEV_FB_FREE')[0]).to.match(/\} 76714$/);
  });

  it("renders 'blank' as the DCGM sentinel and omits a field set to undefined for that GPU only", () => {
    const text = renderDcgmMetrics(node([
      { index: 0, uuid: UUID_A, values: { DCGM_FI_DEV_GPU_UTIL: 'blank', DCGM_FI_PROF_GR_ENGINE_ACTIVE: undefined } },
      { index: 1, uuid: UUID_B },
    ]));
    expect(samples(text, 'DCGM_FI_DEV_GPU_UTIL')[0]).to.match(/UUID="GPU-3431[^}]*\} 9223372036854775794$/);
    expect(samples(text, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE').map((l) => l.includes(UUID_B))).to.deep.equal([true]);
    const onlyUndefined = renderDcgmMetrics(node([{ index: 0, uuid: UUID_A, values: { DCGM_FI_DEV_SM_CLOCK: undefined } }]));
    expect(onlyUndefined).to.not.include('DCGM_FI_DEV_SM_CLOCK');
  });

  it('derives stable, plausible defaults from the uuid, following the values a test sets', () => {
    const gpus = Array.from({ length: 50 }, (_, i): SimGpu => ({ index: i % 8, uuid: `GPU-${i.toString(16).padStart(8, '0')}-aaaa-bbbb-cccc-dddddddddddd` }));
    const first = renderDcgmMetrics(node(gpus));
    expect(renderDcgmMetrics(node(gpus))).to.equal(first);
    const value = (name: string): number[] => (parsePrometheus(first).find((f) => f.name === name)?.metrics ?? []).map((m) => Number(m.value));
    for (const v of value('DCGM_FI_DEV_GPU_UTIL')) expect(v).to.be.within(0, 100);
    for (const v of value('DCGM_FI_DEV_GPU_TEMP')) expect(v).to.be.within(30, 80);
    for (const v of value('DCGM_FI_DEV_POWER_USAGE')) expect(v).to.be.within(60, 700);
    for (const v of value('DCGM_FI_PROF_GR_ENGINE_ACTIVE')) expect(v).to.be.within(0, 1);
    const used = value('DCGM_FI_DEV_FB_USED');
    value('DCGM_FI_DEV_FB_FREE').forEach((free, i) => expect(free + (used[i] ?? 0)).to.equal(81559));
    expect(new Set(value('DCGM_FI_DEV_GPU_UTIL')).size).to.be.greaterThan(10);
    const idle = renderDcgmMetrics(node([{ index: 0, uuid: UUID_A, values: { DCGM_FI_DEV_GPU_UTIL: 0 } }]));
    expect(samples(idle, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE')[0]).to.match(/\} 0\.000000$/);
  });

  it('escapes label values so odd test input still yields valid exposition text', () => {
    const text = renderDcgmMetrics({ hostname: 'node"with\\quote', gpus: [{ index: 0, uuid: UUID_A }] });
    expect(parsePrometheus(text)[0]?.metrics[0]?.labels?.hostname).to.equal('node"with\\quote');
  });
});

describe('simulated dcgm-exporter: loopback addresses', () => {
  it('counts up from the base, skipping .0 and .255 and carrying into the third octet', () => {
    const ips = new LoopbackIps('127.0.1.253');
    expect([ips.next(), ips.next(), ips.next(), ips.next()]).to.deep.equal(['127.0.1.253', '127.0.1.254', '127.0.2.1', '127.0.2.2']);
    expect(new LoopbackIps('127.0.5.0').next()).to.equal('127.0.5.1');
    const wrap = new LoopbackIps('127.0.255.254');
    expect([wrap.next(), wrap.next()]).to.deep.equal(['127.0.255.254', '127.1.0.1']);
  });

  it('refuses a base outside 127/8 with a stable code', () => {
    expect(() => new LoopbackIps('10.0.0.1')).to.throw('"10.0.0.1" is not an IPv4 loopback address').with.property('code', 'SIM_BAD_IP_BASE');
  });
});
