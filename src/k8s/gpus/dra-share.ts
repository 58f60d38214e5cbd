// What a ResourceClaim gives its pods of GPUs, from its allocation and the devices the drivers'
// ResourceSlices publish. A `gpu` or `vfio` device is one GPU; a `mig` device its compute slices over
// its product's (mig-profile.ts). Results with adminAccess (a monitor's view of a GPU someone else
// holds) and the devices of other drivers (IMEX channels, NICs) are no GPUs. A claim reserved for
// several pods is split evenly between them; NVIDIA's GpuConfig says whether they time-slice or use MPS.
import type { DeviceClass, ResourceClaim, ResourceSlice, SliceDevice } from '../objects/dra-types.js';
import { migComputeSlices } from './mig-profile.js';
import { migShare, moreShared, NO_SHARE, type GpuShare, type GpuSharing, type ShareSettings } from './pod-share.js';
import { gfdProductName } from './product-name.js';

/** NVIDIA's DRA driver for GPUs. */
export const NVIDIA_GPU_DRIVER = 'gpu.nvidia.com';

/** One published device, as the count reads it. */
export interface DraDevice {
  /** The driver's `type` attribute: `gpu`, `vfio`, `mig`, or another driver's own. */
  type: string | null;
  productName: string | null;
  profile: string | null;
  uuid: string | null;
  /** A MIG device's GPU (`parentUUID`): the physical GPUs of a node are its gpu devices and these parents. */
  parentUuid: string | null;
}

/** The key of a device among all slices: (driver, pool, device). */
export function deviceKey(driver: string, pool: string, device: string): string {
  return `${driver}/${pool}/${device}`;
}

function stringAttribute(device: SliceDevice, name: string): string | null {
  const value = (device.attributes ?? device.basic?.attributes)?.[name]?.string;
  return value === undefined || value === '' ? null : value;
}

/** The devices a slice publishes, by deviceKey. */
export function sliceDevices(slice: ResourceSlice): Map<string, DraDevice> {
  const devices = new Map<string, DraDevice>();
  const driver = slice.spec?.driver ?? '';
  const pool = slice.spec?.pool?.name ?? '';
  for (const device of slice.spec?.devices ?? []) {
    if (device.name === undefined || device.name === '') continue;
    devices.set(deviceKey(driver, pool, device.name), {
      type: stringAttribute(device, 'type'),
      productName: stringAttribute(device, 'productName'),
      profile: stringAttribute(device, 'profile'),
      uuid: stringAttribute(device, 'uuid'),
      parentUuid: stringAttribute(device, 'parentUUID'),
    });
  }
  return devices;
}

/** The pod uids a claim is reserved for. */
export function reservedPods(claim: ResourceClaim): string[] {
  return (claim.status?.reservedFor ?? [])
    .filter((consumer) => (consumer.resource ?? 'pods') === 'pods' && typeof consumer.uid === 'string' && consumer.uid !== '')
    .map((consumer) => consumer.uid as string);
}

/** How NVIDIA's GpuConfig of the claim shares its GPUs: `mps`, `time_slicing`, or null when it says nothing. */
function configuredSharing(claim: ResourceClaim): GpuSharing | null {
  for (const config of claim.spec?.devices?.config ?? []) {
    if (config.opaque?.driver !== NVIDIA_GPU_DRIVER) continue;
    const strategy = (config.opaque.parameters as { sharing?: { strategy?: unknown } } | undefined)?.sharing?.strategy;
    if (strategy === 'MPS') return 'mps';
    if (strategy === 'TimeSlicing') return 'time_slicing';
  }
  return null;
}

/**
 * The device type a DeviceClass selects of NVIDIA's GPU driver (`device.attributes['gpu.nvidia.com'].type
 * == 'mig'`, as the driver's classes say); null for another driver's class or one that does not say.
 */
export function classDeviceType(deviceClass: DeviceClass): string | null {
  for (const selector of deviceClass.spec?.selectors ?? []) {
    const expression = selector.cel?.expression ?? '';
    if (!expression.includes(`'${NVIDIA_GPU_DRIVER}'`)) continue;
    const type = /\['gpu\.nvidia\.com'\]\.type\s*==\s*'([a-z]+)'/.exec(expression)?.[1];
    if (type !== undefined) return type;
  }
  return null;
}

/** The DeviceClass a result's request (`request` or `request/subrequest`) of the claim names. */
export function requestClassName(claim: ResourceClaim, request: string): string | null {
  const [main, sub] = request.split('/');
  const found = claim.spec?.devices?.requests?.find((candidate) => candidate.name === main);
  if (found === undefined) return null;
  if (sub !== undefined) return found.firstAvailable?.find((candidate) => candidate.name === sub)?.deviceClassName ?? null;
  return found.exactly?.deviceClassName ?? found.deviceClassName ?? null;
}

/** What the count looks devices up in: the published slices, and the classes for a device not published. */
export interface DraLookup {
  device(key: string): DraDevice | undefined;
  /** The device type a class selects (classDeviceType), null when unknown. */
  classType?(className: string): string | null;
}

/**
 * The share of one pod of those the claim is reserved for. A result's device is looked up in the
 * slices; one not published (yet, or any more) has the type its request's class selects, and a
 * device of NVIDIA's GPU driver of no known class counts as one whole GPU.
 */
export function claimShareOfPod(
  claim: ResourceClaim,
  lookup: DraLookup | ((key: string) => DraDevice | undefined),
  settings: ShareSettings = {},
): GpuShare {
  const { device: devices, classType } = typeof lookup === 'function' ? { device: lookup, classType: undefined } : lookup;
  const pods = Math.max(1, reservedPods(claim).length);
  let count = 0;
  let equivalents = 0;
  let sharing: GpuSharing = 'exclusive';
  let model: string | null = null;
  for (const result of claim.status?.allocation?.devices?.results ?? []) {
    if (result.adminAccess === true) continue;
    const driver = result.driver ?? '';
    // Another driver's devices (IMEX channels, NICs) are no GPUs, whatever their `type` says.
    if (driver !== NVIDIA_GPU_DRIVER) continue;
    const device = devices(deviceKey(driver, result.pool ?? '', result.device ?? ''));
    const className = device === undefined ? requestClassName(claim, result.request ?? '') : null;
    const classed = className === null ? null : (classType?.(className) ?? null);
    const type = device?.type ?? classed ?? 'gpu';
    if (type !== 'gpu' && type !== 'vfio' && type !== 'mig') continue;
    count += 1;
    const slices = type === 'mig' ? (migComputeSlices(device?.profile ?? '') ?? 1) : null;
    equivalents += slices === null ? 1 : migShare(slices, gfdProductName(device?.productName), settings);
    if (type === 'mig') sharing = moreShared(sharing, 'mig');
    model ??= gfdProductName(device?.productName);
  }
  if (count === 0) return NO_SHARE;
  // Pods that share a claim share its GPUs: by time-slicing, unless the claim's config says MPS.
  const shared = configuredSharing(claim) ?? (pods > 1 ? 'time_slicing' : null);
  if (shared !== null) sharing = moreShared(sharing, shared);
  return { devices: count, equivalents: equivalents / pods, sharing, model };
}
