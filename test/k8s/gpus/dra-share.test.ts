// What a DRA ResourceClaim gives each of its pods, on NVIDIA's DRA driver's slices and claims
// (test/fixtures/kubernetes/gpu-sharing/): whole GPUs, MIG devices, a claim shared by two pods,
// adminAccess results and IMEX channels, which are no GPUs.
import { expect } from 'chai';
import { claimShareOfPod, reservedPods, sliceDevices, type DraDevice } from '../../../src/k8s/gpus/dra-share.js';
import type { GpuShare } from '../../../src/k8s/gpus/pod-share.js';
import type { ResourceClaim, ResourceSlice } from '../../../src/k8s/objects/dra-types.js';
import { objectFixture } from '../../fixtures/kubernetes/kubernetes-fixtures.js';

const claim = (name: string): ResourceClaim => objectFixture(`gpu-sharing/${name}.json`, 'ResourceClaim');
const slice = (name: string): ResourceSlice => objectFixture(`gpu-sharing/${name}.json`, 'ResourceSlice');
const published = new Map<string, DraDevice>([...sliceDevices(slice('dra-resourceslice-gpu')), ...sliceDevices(slice('dra-resourceslice-mig'))]);
const lookup = (key: string): DraDevice | undefined => published.get(key);

/** A claim allocated `devices` of the MIG slice, for one pod. */
function migClaim(devices: string[]): ResourceClaim {
  return {
    status: {
      allocation: { devices: { results: devices.map((device) => ({ request: 'mig', driver: 'gpu.nvidia.com', pool: 'gpu-h100-dra-mig-1', device })) } },
      reservedFor: [{ resource: 'pods', name: 'p', uid: 'pod-1' }],
    },
  };
}

const H100 = 'NVIDIA-H100-80GB-HBM3';
const rows: { name: string; claim: ResourceClaim; expected: GpuShare }[] = [
  { name: 'one whole GPU', claim: claim('dra-resourceclaim-allocated'), expected: { devices: 1, equivalents: 1, sharing: 'exclusive', model: H100 } },
  { name: 'a GPU shared by two pods, time-sliced', claim: claim('dra-resourceclaim-shared'), expected: { devices: 1, equivalents: 0.5, sharing: 'time_slicing', model: H100 } },
  { name: 'adminAccess results: no GPU', claim: claim('dra-resourceclaim-admin'), expected: { devices: 0, equivalents: 0, sharing: 'exclusive', model: null } },
  { name: 'an IMEX channel: no GPU', claim: claim('dra-resourceclaim-imex'), expected: { devices: 0, equivalents: 0, sharing: 'exclusive', model: null } },
  { name: 'a 1g.10gb MIG device', claim: migClaim(['gpu-0-mig-1g10gb-19-0']), expected: { devices: 1, equivalents: 1 / 7, sharing: 'mig', model: H100 } },
  {
    name: 'a device not published (any more) of NVIDIA’s driver: one whole GPU',
    claim: { status: { allocation: { devices: { results: [{ driver: 'gpu.nvidia.com', pool: 'gone', device: 'gpu-3' }] } }, reservedFor: [{ resource: 'pods', uid: 'p' }] } },
    expected: { devices: 1, equivalents: 1, sharing: 'exclusive', model: null },
  },
  {
    name: 'another driver\'s device that calls itself a gpu: no GPU of NVIDIA\'s driver',
    claim: { status: { allocation: { devices: { results: [{ driver: 'gpu.example.com', pool: 'gpu-h100-dra-1', device: 'gpu-0' }] } }, reservedFor: [{ resource: 'pods', uid: 'p' }] } },
    expected: { devices: 0, equivalents: 0, sharing: 'exclusive', model: null },
  },
];

describe('gpus: what a DRA claim gives its pods', () => {
  it('reads every device of the slices by (driver, pool, device)', () => {
    expect([...published.keys()]).to.include.members(['gpu.nvidia.com/gpu-h100-dra-1/gpu-0', 'gpu.nvidia.com/gpu-h100-dra-1/gpu-1', 'gpu.nvidia.com/gpu-h100-dra-mig-1/gpu-0-mig-1g10gb-19-0']);
    expect(published.get('gpu.nvidia.com/gpu-h100-dra-mig-1/gpu-0-mig-1g10gb-19-0')).to.deep.include({ type: 'mig', profile: '1g.10gb', productName: 'NVIDIA H100 80GB HBM3' });
  });

  it('attributes a claim to the pods of its reservedFor', () => {
    expect(reservedPods(claim('dra-resourceclaim-shared'))).to.deep.equal(['366d3954-64ac-58a3-94eb-92799fcf07f7', '4479df2e-cc3c-5eb4-af41-d185c6c4612c']);
  });

  for (const row of rows) {
    it(`${row.name}: ${row.expected.equivalents.toFixed(4)} GPU per pod`, () => {
      expect(claimShareOfPod(row.claim, lookup)).to.deep.equal(row.expected);
    });
  }

  it('adds up the MIG devices of a claim', () => {
    const devices = [...published.keys()].filter((key) => key.includes('dra-mig-1/')).map((key) => key.split('/')[2] as string);
    const profiles = devices.map((device) => published.get(`gpu.nvidia.com/gpu-h100-dra-mig-1/${device}`)?.profile);
    const expected = profiles.reduce((sum, profile) => sum + Number(/^(\d+)g/.exec(profile ?? '')?.[1]) / 7, 0);
    const share = claimShareOfPod(migClaim(devices), lookup);
    expect(share.devices).to.equal(devices.length);
    expect(share.equivalents).to.be.closeTo(expected, 1e-12);
  });
});
