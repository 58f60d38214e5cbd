import { expect } from 'chai';
import { isDcgmValue, readDcgmPayload, type GpuReading } from '../../../src/telemetry/scrape/dcgm-readings.js';
import { METRIC_SLOT } from '../../../src/telemetry/rings/metric-codec.js';
import { readExporterCapture as fixture } from '../../fixtures/exporters/exporter-fixtures.js';


function metricsOf(reading: GpuReading | undefined): Record<string, number | null> {
  if (reading === undefined) throw new Error('no reading');
  return Object.fromEntries(Object.entries(METRIC_SLOT).map(([name, slot]) => {
    const value = reading.values[slot] ?? NaN;
    return [name, Number.isNaN(value) ? null : Math.round(value * 1000) / 1000];
  }));
}

describe('dcgm-exporter payloads → GPU readings', () => {
  it('reads the A100 MIG capture: the whole GPU and its 1g.5gb instance, utilization from the graphics engine', () => {
    const payload = readDcgmPayload(fixture('dcgm/a100-mig-1g.5gb-dcp-metrics-cloud-native-docs.txt'));
    expect(payload.samples).to.equal(21);
    const byKey = new Map(payload.readings.map((r) => [r.key, r]));
    expect([...byKey.keys()]).to.have.members(['GPU-34319582-d595-d1c7-d1d2-179bcfa61660', 'GPU-34319582-d595-d1c7-d1d2-179bcfa61660/13']);
    const whole = byKey.get('GPU-34319582-d595-d1c7-d1d2-179bcfa61660');
    expect(whole).to.include({ hostname: 'ub20-a100-k8s', gpu: '0', migInstance: undefined, pod: undefined });
    expect(metricsOf(whole)).to.deep.equal({
      gpu_utilization: 99.563, // no DCGM_FI_DEV_GPU_UTIL in a DCP capture: GR_ENGINE_ACTIVE × 100
      memory_utilization: 11.953, // FB_USED / (FB_USED + FB_FREE) = 4845 / 40535
      temperature: 61,
      power_usage: 409.692,
      gpu_usage: 99.563,
    });
    const instance = byKey.get('GPU-34319582-d595-d1c7-d1d2-179bcfa61660/13');
    expect(instance?.migInstance).to.equal('13');
    expect(metricsOf(instance)).to.deep.equal({ gpu_utilization: 99.569, memory_utilization: null, temperature: null, power_usage: null, gpu_usage: 99.569 });
  });

  it('reads the T4 scrapes of the Datadog fixture and skips its label-less dummy block', () => {
    const payload = readDcgmPayload(fixture('dcgm/datadog-integrations-core-dcgm-tests-fixtures-metrics.txt'));
    const t4 = payload.readings.find((r) => r.key === 'GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e');
    expect(t4).to.include({ modelName: 'Tesla T4', hostname: '424773df46e0' });
    expect(metricsOf(t4)).to.deep.equal({ gpu_utilization: 0, memory_utilization: 0, temperature: 25, power_usage: 8.969, gpu_usage: 0 });
    expect(payload.unidentified).to.equal(1); // the dummy DCGM_FI_PROF_GR_ENGINE_ACTIVE without labels
  });

  it('finds no GPU reading in an nvidia-smi exporter payload (another exporter, other series names)', () => {
    for (const file of ['h100-80gb-hbm3-driver-590.48.01-load.metrics.txt', 'h100-mig-driver-590.48.01-load.metrics.txt']) {
      const payload = readDcgmPayload(fixture(`nvidia-smi-exporter/${file}`));
      expect(payload.samples, file).to.be.greaterThan(50);
      expect(payload.readings, file).to.deep.equal([]);
    }
  });

  it('treats DCGM blank sentinels, NaN and infinities as missing values', () => {
    // Written as text: the int64 sentinels are not exact doubles (the exporter's text is not either).
    for (const value of [Number('9223372036854775794'), Number('9223372036854775792'), 2147483632, 2147483634, 140737488355328, NaN, Infinity, -Infinity]) {
      expect(isDcgmValue(value), String(value)).to.equal(false);
    }
    expect(isDcgmValue(0)).to.equal(true);
    expect(isDcgmValue(81559)).to.equal(true);
    const payload = readDcgmPayload(
      [
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-x"} 9223372036854775794',
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-x"} NaN',
        'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-x"} +Inf',
        'DCGM_FI_DEV_MEM_COPY_UTIL{gpu="0",UUID="GPU-x"} 7',
      ].join('\n'),
    );
    expect(metricsOf(payload.readings[0])).to.deep.equal({ gpu_utilization: null, memory_utilization: 7, temperature: null, power_usage: null, gpu_usage: null });
  });

  it('accepts labels in any order, Hostname or hostname, pod or pod_name, and ignores an empty pod label', () => {
    const payload = readDcgmPayload(
      [
        'DCGM_FI_DEV_GPU_UTIL{namespace="llm",pod="train-0",hostname="n1",UUID="GPU-a",gpu="0",container="main"} 55',
        'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",Hostname="n1",pod_name="eval-3",pod_namespace="vision"} 65',
        'DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-c",Hostname="n1",pod="",namespace=""} 0',
      ].join('\n'),
    );
    const byKey = new Map(payload.readings.map((r) => [r.key, r]));
    expect(byKey.get('GPU-a')).to.deep.include({ hostname: 'n1', pod: { namespace: 'llm', name: 'train-0' } });
    expect(byKey.get('GPU-b')).to.deep.include({ hostname: 'n1', pod: { namespace: 'vision', name: 'eval-3' } });
    expect(byKey.get('GPU-c')?.pod).to.equal(undefined);
  });

  it('reads a DRA claim from dra_claim_name/dra_claim_namespace, with or without pod labels', () => {
    // Attribute labels in the order dcgm-exporter's template writes its map (sorted keys).
    const payload = readDcgmPayload(
      [
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",' +
          'hostname="gpu-h100-dra-1",DCGM_FI_DRIVER_VERSION="580.95.05",dra_claim_name="train-dra-0-gpu-x7k2p",dra_claim_namespace="ml",' +
          'dra_device_name="gpu-0",dra_driver_name="gpu.nvidia.com",dra_pool_name="gpu-h100-dra-1"} 71',
        'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",hostname="gpu-h100-dra-1",container="infer",dra_claim_name="shared-h100",' +
          'dra_claim_namespace="ml",dra_device_name="gpu-1",dra_driver_name="gpu.nvidia.com",dra_pool_name="gpu-h100-dra-1",namespace="ml",pod="infer-a"} 40',
        // A claim namespace left out: the claim is in its pod's namespace.
        'DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-c",dra_claim_name="c",namespace="cv"} 1',
        'DCGM_FI_DEV_GPU_UTIL{gpu="3",UUID="GPU-d",dra_claim_name="",dra_claim_namespace=""} 0',
      ].join('\n'),
    );
    const byKey = new Map(payload.readings.map((r) => [r.key, r]));
    expect(byKey.get('GPU-a')).to.deep.include({ pod: undefined, claim: { namespace: 'ml', name: 'train-dra-0-gpu-x7k2p' }, migInstance: undefined });
    expect(metricsOf(byKey.get('GPU-a')).gpu_utilization).to.equal(71);
    expect(byKey.get('GPU-b')).to.deep.include({ pod: { namespace: 'ml', name: 'infer-a' }, claim: { namespace: 'ml', name: 'shared-h100' } });
    expect(byKey.get('GPU-c')?.claim).to.deep.equal({ namespace: 'cv', name: 'c' });
    expect(byKey.get('GPU-d')?.claim).to.equal(undefined);
  });

  it('keys a DRA MIG device on its parent\'s series by dra_mig_device_uuid, and an instance series by GPU_I_ID as before', () => {
    const payload = readDcgmPayload(
      [
        // dcgm-exporter writes the parent's series once per claimed MIG device, with that device's labels.
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-p",dra_claim_name="a",dra_claim_namespace="ml",dra_mig_device_uuid="MIG-1",dra_mig_profile="1g.10gb"} 50',
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-p",dra_claim_name="b",dra_claim_namespace="ml",dra_mig_device_uuid="MIG-2",dra_mig_profile="1g.10gb"} 50',
        'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-p",GPU_I_PROFILE="1g.10gb",GPU_I_ID="13"} 0.5',
        // Both: the instance id wins, so the series keeps the key a non-DRA exporter gives it.
        'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-p",GPU_I_ID="14",dra_claim_name="c",dra_claim_namespace="ml",dra_mig_device_uuid="MIG-3"} 0.25',
      ].join('\n'),
    );
    const byKey = new Map(payload.readings.map((r) => [r.key, r]));
    expect([...byKey.keys()]).to.deep.equal(['GPU-p/MIG-1', 'GPU-p/MIG-2', 'GPU-p/13', 'GPU-p/14']);
    expect(byKey.get('GPU-p/MIG-1')).to.deep.include({ migInstance: 'MIG-1', claim: { namespace: 'ml', name: 'a' } });
    expect(byKey.get('GPU-p/MIG-2')?.claim).to.deep.equal({ namespace: 'ml', name: 'b' });
    expect(byKey.get('GPU-p/13')).to.deep.include({ migInstance: '13', claim: undefined });
    expect(byKey.get('GPU-p/14')).to.deep.include({ migInstance: '14', claim: { namespace: 'ml', name: 'c' } });
  });

  it('prefers FB used/free for memory utilization and falls back to the copy utilization', () => {
    const payload = readDcgmPayload(
      [
        'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 20000',
        'DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a"} 60000',
        'DCGM_FI_DEV_MEM_COPY_UTIL{gpu="0",UUID="GPU-a"} 3',
        'DCGM_FI_DEV_MEM_COPY_UTIL{gpu="1",UUID="GPU-b"} 42',
        'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b"} 64',
        'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",UUID="GPU-b"} 0.5',
      ].join('\n'),
    );
    const byKey = new Map(payload.readings.map((r) => [r.key, r]));
    expect(metricsOf(byKey.get('GPU-a')).memory_utilization).to.equal(25);
    expect(metricsOf(byKey.get('GPU-b'))).to.include({ memory_utilization: 42, gpu_utilization: 64, gpu_usage: 50 });
  });

  it('reads each GPU\'s last XID error, NaN where it is blank or not exported', () => {
    const payload = readDcgmPayload(
      [
        'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-a"} 79',
        'DCGM_FI_DEV_XID_ERRORS{gpu="1",UUID="GPU-b"} 0',
        'DCGM_FI_DEV_XID_ERRORS{gpu="2",UUID="GPU-c"} 2147483632',
        'DCGM_FI_DEV_GPU_UTIL{gpu="3",UUID="GPU-d"} 12',
        'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-e",GPU_I_PROFILE="1g.10gb",GPU_I_ID="13"} 13',
      ].join('\n'),
    );
    const byKey = new Map(payload.readings.map((r) => [r.key, r.xid]));
    expect([...byKey]).to.deep.equal([['GPU-a', 79], ['GPU-b', 0], ['GPU-c', NaN], ['GPU-d', NaN], ['GPU-e/13', 13]]);
    // Not an API metric: a reading with only an XID has no metric values.
    expect(metricsOf(payload.readings[0])).to.deep.equal({ gpu_utilization: null, memory_utilization: null, temperature: null, power_usage: null, gpu_usage: null });
  });

  it('reads the XID field of the captures (0: none since the driver loaded)', () => {
    const mig = readDcgmPayload(fixture('dcgm/a100-mig-1g.5gb-dcp-metrics-cloud-native-docs.txt'));
    expect(mig.readings.map((r) => r.xid)).to.deep.equal([0, 0]);
  });

  it('keys GPUs of an exporter without UUIDs by host and index', () => {
    const payload = readDcgmPayload('DCGM_FI_DEV_GPU_UTIL{gpu="3",Hostname="n7"} 12\n');
    expect(payload.readings.map((r) => r.key)).to.deep.equal(['n7/3']);
  });

  it('fails the whole payload when the text is not valid exposition', () => {
    expect(() => readDcgmPayload('DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a'))
      .to.throw()
      .with.property('code', 'EXPOSITION_INVALID');
  });
});
