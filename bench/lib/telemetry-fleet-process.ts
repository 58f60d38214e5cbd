// Child process entry (started by telemetry-fleet.ts): a SimDcgmFleet with one 8-GPU exporter per
// node of the benchmark's cluster plan, each GPU attributed to its node's pod, field values the
// simulator's defaults (a full dcgm-exporter 4.x payload of 15 fields). Runs apart from the measured
// service so that rendering and serving a thousand exporters does not share its event loop.
// Protocol over the IPC channel: it sends `{ type: 'ready', port, exporters: [{ hostname, ip }] }` (or
// `{ type: 'failed', message }`) and closes the fleet and exits on `{ type: 'stop' }` or when the
// parent goes away.
import { SimDcgmFleet } from '../../sim/dcgm-exporter/fleet.js';
import { planCluster, simNodeOf } from './telemetry-cluster.js';

export interface FleetReady {
  type: 'ready';
  port: number;
  exporters: { hostname: string; ip: string }[];
}

export interface FleetFailed {
  type: 'failed';
  message: string;
}

/** Exporters started at once: binding a listener is quick, but a thousand at a time is a burst of fds. */
const ADD_BATCH = 50;

async function warm(url: string): Promise<void> {
  const response = await fetch(url, { headers: { 'accept-encoding': 'gzip' } });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`Simulated exporter ${url} answered HTTP ${response.status} to its warm-up scrape`);
}

async function main(): Promise<void> {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error('Cannot run the exporter fleet: it must be started with an IPC channel (see telemetry-fleet.ts)');
  const nodes = Number(process.env['BENCH_FLEET_NODES']);
  const bigJobNodes = Number(process.env['BENCH_FLEET_BIG_JOB_NODES'] ?? '0');
  if (!Number.isInteger(nodes) || nodes <= 0) throw new Error(`Cannot run the exporter fleet: BENCH_FLEET_NODES must be a positive integer, got "${process.env['BENCH_FLEET_NODES']}"`);
  const plan = planCluster(nodes, { bigJobNodes });
  const fleet = await SimDcgmFleet.start({ ipBase: process.env['BENCH_FLEET_IP_BASE'] });
  const stop = async () => {
    await fleet.close();
    process.exit(0);
  };
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') void stop();
  });
  process.on('disconnect', () => void stop());
  try {
    const exporters: FleetReady['exporters'] = [];
    for (let i = 0; i < plan.nodes.length; i += ADD_BATCH) {
      const handles = await Promise.all(plan.nodes.slice(i, i + ADD_BATCH).map((node) => fleet.add(simNodeOf(node))));
      for (const handle of handles) exporters.push({ hostname: handle.hostname, ip: handle.ip });
      // One gzip scrape each renders and compresses the payload into the exporter's cache, as a real
      // exporter has its metrics ready: the service's first tick then measures the service.
      await Promise.all(handles.map((handle) => warm(handle.url)));
    }
    const ready: FleetReady = { type: 'ready', port: fleet.port, exporters };
    send(ready);
  } catch (error) {
    const failed: FleetFailed = { type: 'failed', message: (error as Error).message };
    send(failed);
    await stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
