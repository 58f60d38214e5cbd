// The fields of Dynamic Resource Allocation's objects (resource.k8s.io v1; v1beta2 and v1beta1 have
// them at the same paths for what is read here) that the GPU count reads, as plain types.
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

export interface ResourceClaim {
  metadata?: ObjectMeta;
  spec?: {
    devices?: {
      config?: { requests?: string[]; opaque?: { driver?: string; parameters?: unknown } }[];
    };
  };
  status?: {
    allocation?: { devices?: { results?: DeviceRequestResult[] } };
    reservedFor?: { resource?: string; name?: string; uid?: string }[];
  };
}
