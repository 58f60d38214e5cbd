// A fleet of simulated dcgm-exporters in one process, one per GPU node. Each exporter owns a loopback
// address and all listen on the same port, so the service is configured with one exporter port and
// finds each exporter at its pod IP, exactly as in a cluster. One http.Server per address (one fd
// each, plus keep-alive connections): 1,000 nodes stay far below the usual fd limits.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SimExporter, type SimExporterHandle } from './exporter.js';
import type { Delay } from './faults.js';
import { LoopbackIps } from './loopback-ips.js';
import type { RenderOptions } from './render.js';
import type { SimNodeGpus } from './types.js';

export interface SimDcgmFleetOptions {
  /** The port every exporter listens on (default: picked by the OS for the first address). */
  port?: number;
  /** First exporter address (default 127.0.1.1); later ones count up from it. */
  ipBase?: string;
  /** Metrics path (default `/metrics`); other paths answer 404. */
  path?: string;
  /** Label style and driver version for every exporter (overridable per add()). */
  render?: RenderOptions;
  /** Waits of the `slow` fault (default: a real timer). */
  delay?: Delay;
  /**
   * Idle keep-alive of exporter connections (default 65 s). Go's server keeps idle connections open,
   * so a scraper's reused socket must not race Node's 5 s default.
   */
  keepAliveTimeoutMs?: number;
}

/** A listener on one address, with the exporter it serves once add() has given it one. */
interface Slot {
  ip: string;
  server: Server;
  exporter?: SimExporter;
}

/** How many addresses add() tries when the fleet's port is already taken on one (by another process). */
const BIND_ATTEMPTS = 8;

const realDelay: Delay = (ms, signal) => sleep(ms, undefined, { signal });

export class SimDcgmFleet {
  private readonly exporters = new Map<string, Slot>();
  /** Hostnames of exporters added or being added (an add() awaiting its listener is not in `exporters` yet). */
  private readonly hostnames = new Set<string>();
  private readonly closing = new AbortController();
  private closed = false;

  private constructor(
    readonly port: number,
    readonly path: string,
    private readonly ips: LoopbackIps,
    /** The first address's listener, bound by start() to fix the port, until the first add() takes it. */
    private reserved: Slot | undefined,
    private readonly options: SimDcgmFleetOptions,
  ) {}

  static async start(options: SimDcgmFleetOptions = {}): Promise<SimDcgmFleet> {
    const ips = new LoopbackIps(options.ipBase);
    const ip = ips.next();
    const slot: Slot = { ip, server: createServer() };
    let port: number;
    try {
      port = await listen(slot, { port: options.port ?? 0, keepAliveTimeoutMs: options.keepAliveTimeoutMs });
    } catch (error) {
      throw fleetError('SIM_BIND_FAILED', `Cannot start the simulated exporter fleet on ${ip}:${options.port ?? 0}: ${(error as Error).message}`);
    }
    return new SimDcgmFleet(port, options.path ?? '/metrics', ips, slot, options);
  }

  /** Starts an exporter for `node` on the next address. */
  async add(node: SimNodeGpus, options: { render?: RenderOptions } = {}): Promise<SimExporterHandle> {
    if (this.closed) throw fleetError('SIM_FLEET_CLOSED', `Cannot add simulated exporter "${node.hostname}": the fleet is closed`);
    if (this.hostnames.has(node.hostname)) {
      throw fleetError('SIM_DUPLICATE_NODE', `Cannot add simulated exporter "${node.hostname}": a node with that hostname exists`);
    }
    // Hostname, reserved listener and address are claimed before the first await, so concurrent
    // add() calls get distinct ones.
    this.hostnames.add(node.hostname);
    const reserved = this.reserved;
    this.reserved = undefined;
    let slot: Slot;
    try {
      slot = reserved ?? (await this.bindNext(node.hostname));
    } catch (error) {
      this.hostnames.delete(node.hostname);
      throw error;
    }
    if (this.closed) {
      await stop(slot.server);
      throw fleetError('SIM_FLEET_CLOSED', `Cannot add simulated exporter "${node.hostname}": the fleet closed meanwhile`);
    }
    slot.exporter = new SimExporter(node, {
      ip: slot.ip,
      port: this.port,
      path: this.path,
      render: { ...this.options.render, ...options.render },
      delay: this.options.delay ?? realDelay,
      closing: this.closing.signal,
    });
    this.exporters.set(node.hostname, slot);
    return slot.exporter;
  }

  /** Stops a node's exporter: its address then refuses connections, as a drained node's pod IP does. */
  async remove(hostname: string): Promise<boolean> {
    const slot = this.exporters.get(hostname);
    if (slot === undefined) return false;
    this.exporters.delete(hostname);
    this.hostnames.delete(hostname);
    await stop(slot.server);
    return true;
  }

  get(hostname: string): SimExporterHandle | undefined {
    return this.exporters.get(hostname)?.exporter;
  }

  /** Every running exporter, in the order they were added. */
  list(): SimExporterHandle[] {
    return [...this.exporters.values()].flatMap((slot) => (slot.exporter === undefined ? [] : [slot.exporter]));
  }

  /** Closes every listener and destroys every connection, hung and slow requests included. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    const slots = [...this.exporters.values(), ...(this.reserved === undefined ? [] : [this.reserved])];
    this.exporters.clear();
    this.hostnames.clear();
    this.reserved = undefined;
    await Promise.all(slots.map((slot) => stop(slot.server)));
  }

  private async bindNext(hostname: string): Promise<Slot> {
    let lastError: unknown;
    for (let attempt = 0; attempt < BIND_ATTEMPTS; attempt += 1) {
      const slot: Slot = { ip: this.ips.next(), server: createServer() };
      try {
        await listen(slot, { port: this.port, keepAliveTimeoutMs: this.options.keepAliveTimeoutMs });
        return slot;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        lastError = error;
      }
    }
    throw fleetError(
      'SIM_BIND_FAILED',
      `Cannot start simulated exporter "${hostname}": port ${this.port} is in use on ${BIND_ATTEMPTS} consecutive addresses (${String(lastError)})`,
    );
  }
}

async function listen(slot: Slot, options: { port: number; keepAliveTimeoutMs: number | undefined }): Promise<number> {
  const { server } = slot;
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 65_000;
  server.on('request', (req, res) => {
    // Before add() gives the first address its exporter there is nothing to answer: drop the
    // connection, which a scraper sees like an exporter that is not up yet.
    if (slot.exporter === undefined) return void req.socket.destroy();
    slot.exporter.handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: slot.ip, port: options.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function fleetError(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}
