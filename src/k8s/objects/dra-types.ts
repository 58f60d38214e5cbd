// The fields of Dynamic Resource Allocation's objects (resource.k8s.io v1; v1beta2 has them at the
// same paths, v1beta1 a slice device's attributes under `basic`) that the GPU count reads, as plain types.
import type { ObjectMeta } from './k8s-types.js';

/** A typed attribute of a device: exactly one of these is set. */
export interface DeviceAttribute {
  string?: string;
  int?: number;
  bool?: boolean;
  version?: string;
}

export interface SliceDevice {
  name?: string;
  attributes?: Record<string, DeviceAttribute>;
  /** resource.k8s.io/v1beta1's place for the attributes. */
  basic?: { attributes?: Record<string, DeviceAttribute> };
  capacity?: Record<string, { value?: string }>;
}

export interface ResourceSlice {
  metadata?: ObjectMeta;
  spec?: {
    driver?: string;
    nodeName?: string;
    pool?: { name?: string; generation?: number; resourceSliceCount?: number };
    devices?: SliceDevice[];
  };
}

export interface DeviceRequestResult {
  request?: string;
  driver?: string;
  pool?: string;
  device?: string;
  adminAccess?: boolean;
}

/** A request of a claim: its class (v1 and v1beta2 under `exactly`, v1beta1 at the top), or alternatives. */
export interface DeviceRequest {
  name?: string;
  deviceClassName?: string;
  exactly?: { deviceClassName?: string };
  firstAvailable?: { name?: string; deviceClassName?: string }[];
}

export interface ResourceClaim {
  metadata?: ObjectMeta;
  spec?: {
    devices?: {
      requests?: DeviceRequest[];
      config?: { requests?: string[]; opaque?: { driver?: string; parameters?: unknown } }[];
    };
  };
  status?: {
    allocation?: { devices?: { results?: DeviceRequestResult[] } };
    reservedFor?: { resource?: string; name?: string; uid?: string }[];
  };
}

export interface DeviceClass {
  metadata?: ObjectMeta;
  spec?: { selectors?: { cel?: { expression?: string } }[] };
}
