// The state of one simulated GPU node as its dcgm-exporter would see it: GPUs, MIG instances, the
// pods the kubelet assigned them (through the device plugin, or a DRA ResourceClaim) and the field
// values DCGM reports. Plain data, no behaviour.

/** The DCGM fields the simulator renders (the service reads the first seven; the rest are realistic noise). */
export type DcgmField =
  | 'DCGM_FI_DEV_SM_CLOCK'
  | 'DCGM_FI_DEV_MEM_CLOCK'
  | 'DCGM_FI_DEV_MEMORY_TEMP'
  | 'DCGM_FI_DEV_GPU_TEMP'
  | 'DCGM_FI_DEV_POWER_USAGE'
  | 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION'
  | 'DCGM_FI_DEV_PCIE_REPLAY_COUNTER'
  | 'DCGM_FI_DEV_GPU_UTIL'
  | 'DCGM_FI_DEV_MEM_COPY_UTIL'
  | 'DCGM_FI_DEV_XID_ERRORS'
  | 'DCGM_FI_DEV_FB_FREE'
  | 'DCGM_FI_DEV_FB_USED'
  | 'DCGM_FI_PROF_GR_ENGINE_ACTIVE'
  | 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE'
  | 'DCGM_FI_PROF_DRAM_ACTIVE';

/** `'blank'` renders DCGM's blank sentinel instead of a number. */
export type FieldValues = Partial<Record<DcgmField, number | 'blank'>>;

export interface SimPodRef {
  pod: string;
  namespace: string;
  /** Absent: no container label (the real exporter always has one; tests that do not care may omit it). */
  container?: string;
}

/**
 * The DRA ResourceClaim a GPU or MIG device was allocated through, which dcgm-exporter (with
 * KUBERNETES_ENABLE_DRA) writes as `dra_*` labels. Given without a pod, the series names the claim
 * only; given with one, both.
 */
export interface SimClaimRef {
  name: string;
  namespace: string;
  /**
   * The device's name in the driver's ResourceSlice. Default `gpu-<index>`; for MIG
   * `gpu-<index>-mig-<profile without dots>-<instanceId>`, a stand-in for the driver's
   * `…-<GI profile id>-<placement start>`, which the simulator does not model.
   */
  device?: string;
}

export interface SimMigInstance {
  /** MIG profile, e.g. `1g.10gb`; its memory size sets the instance's default framebuffer total. */
  profile: string;
  instanceId: number;
  /** The MIG device's UUID, `MIG-…` (default: made from the GPU's UUID and the instance id). */
  uuid?: string;
  pod?: SimPodRef;
  /** Labels the parent GPU's series, not the instance's: see render.ts. */
  claim?: SimClaimRef;
  values?: FieldValues;
}

export interface SimGpu {
  index: number;
  uuid: string;
  modelName?: string;
  pciBusId?: string;
  pod?: SimPodRef;
  claim?: SimClaimRef;
  values?: FieldValues;
  mig?: SimMigInstance[];
}

export interface SimNodeGpus {
  hostname: string;
  gpus: SimGpu[];
}
