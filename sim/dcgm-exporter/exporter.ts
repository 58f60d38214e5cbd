// One simulated node exporter: the node's GPU state that tests change between scrapes, the fault in
// force, and the request handler its listener calls. Rendering is cached until the state changes,
// so a large fleet scraped often costs little more than its sockets.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { serveFault, type Delay, type SimExporterFault } from './faults.js';
import { renderDcgmMetrics, type RenderOptions } from './render.js';
import { metricsPayload, sendMetrics, sendNotFound, type MetricsPayload } from './respond.js';
import type { FieldValues, SimGpu, SimMigInstance, SimNodeGpus, SimPodRef } from './types.js';

/** Selects a MIG instance of the GPU instead of the whole GPU. */
export interface GpuTarget {
  migInstanceId?: number;
}

/** What tests and the demo hold for one running exporter. */
export interface SimExporterHandle {
  /** The exporter's loopback address: use it as the node's exporter pod IP. */
  readonly ip: string;
  readonly port: number;
  /** `http://<ip>:<port><path>` */
  readonly url: string;
  readonly hostname: string;
  /** Scrapes received on the metrics path, faulted ones included. */
  readonly requests: number;
  /** Headers of the latest scrape (undefined before the first). */
  readonly lastRequestHeaders: IncomingHttpHeaders | undefined;
  /** A copy of the node's current GPU state. */
  snapshot(): SimNodeGpus;
  /** The text the next healthy scrape returns. */
  render(): string;
  /** Replaces every GPU (e.g. a node rebooted into another MIG layout). */
  setGpus(gpus: SimGpu[]): void;
  /** Merges `values` into the GPU's (or the MIG instance's) values. */
  setValues(uuid: string, values: FieldValues, target?: GpuTarget): void;
  /** Attributes the GPU (or MIG instance) to a pod, or to none. */
  assignPod(uuid: string, pod: SimPodRef | undefined, target?: GpuTarget): void;
  /** Switches a fault on until `fault(null)`. */
  fault(fault: SimExporterFault | null): void;
}

export interface SimExporterOptions {
  ip: string;
  port: number;
  path: string;
  render: RenderOptions;
  delay: Delay;
  closing: AbortSignal;
}

export class SimExporter implements SimExporterHandle {
  readonly ip: string;
  readonly port: number;
  readonly url: string;
  readonly hostname: string;
  requests = 0;
  lastRequestHeaders: IncomingHttpHeaders | undefined;
  private gpus: SimGpu[];
  private current: SimExporterFault | null = null;
  private cached: MetricsPayload | undefined;

  constructor(
    node: SimNodeGpus,
    private readonly options: SimExporterOptions,
  ) {
    this.ip = options.ip;
    this.port = options.port;
    this.url = `http://${options.ip}:${options.port}${options.path}`;
    this.hostname = node.hostname;
    // Copies, so a test mutating its own fixture object changes nothing until it calls a setter.
    this.gpus = structuredClone(node.gpus);
  }

  snapshot(): SimNodeGpus {
    return { hostname: this.hostname, gpus: structuredClone(this.gpus) };
  }

  render(): string {
    return renderDcgmMetrics({ hostname: this.hostname, gpus: this.gpus }, this.options.render);
  }

  setGpus(gpus: SimGpu[]): void {
    this.gpus = structuredClone(gpus);
    this.cached = undefined;
  }

  setValues(uuid: string, values: FieldValues, target: GpuTarget = {}): void {
    const { gpu, instance } = this.locate(uuid, target);
    const entity = instance ?? gpu;
    entity.values = { ...entity.values, ...values };
    this.cached = undefined;
  }

  assignPod(uuid: string, pod: SimPodRef | undefined, target: GpuTarget = {}): void {
    const { gpu, instance } = this.locate(uuid, target);
    // The exporter never attributes a MIG parent's series to a pod; accepting it would silently do nothing.
    if (instance === undefined && (gpu.mig ?? []).length > 0) {
      throw simError(
        'SIM_MIG_PARENT_POD',
        `Cannot assign a pod to GPU "${uuid}" on "${this.hostname}": it is MIG-partitioned, so pods use its instances (pass migInstanceId)`,
      );
    }
    (instance ?? gpu).pod = pod === undefined ? undefined : { ...pod };
    this.cached = undefined;
  }

  fault(fault: SimExporterFault | null): void {
    this.current = fault;
  }

  /** The listener's request handler. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    if (new URL(req.url ?? '/', 'http://sim').pathname !== this.options.path) return sendNotFound(res);
    this.requests += 1;
    this.lastRequestHeaders = { ...req.headers };
    if (this.current === null) return sendMetrics({ req, res }, this.payload());
    serveFault(this.current, { req, res, payload: () => this.payload(), delay: this.options.delay, closing: this.options.closing });
  }

  private payload(): MetricsPayload {
    this.cached ??= metricsPayload(this.render());
    return this.cached;
  }

  private locate(uuid: string, target: GpuTarget): { gpu: SimGpu; instance?: SimMigInstance } {
    const gpu = this.gpus.find((g) => g.uuid === uuid);
    if (gpu === undefined) throw simError('SIM_UNKNOWN_GPU', `Cannot find GPU "${uuid}" on simulated node "${this.hostname}"`);
    if (target.migInstanceId === undefined) return { gpu };
    const instance = gpu.mig?.find((m) => m.instanceId === target.migInstanceId);
    if (instance === undefined) {
      throw simError('SIM_UNKNOWN_GPU', `Cannot find MIG instance ${target.migInstanceId} of GPU "${uuid}" on simulated node "${this.hostname}"`);
    }
    return { gpu, instance };
  }
}

function simError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}
