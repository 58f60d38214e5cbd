// Child process entry (started by fleet.ts): a SimDcgmFleet with one 8-GPU exporter per
// node of the benchmark's cluster plan, each GPU attributed to its node's pod, field values the
// simulator's defaults (a full dcgm-exporter 4.x payload of 15 fields). Runs apart from the measured
// service so that rendering and serving a thousand exporters does not share its event loop.
// Its ready message holds the port and each exporter's address; the handshake is ipc-child.ts's.
import { SimDcgmFleet } from '../../../sim/dcgm-exporter/fleet.js';
import { planCluster, simNodeOf } from './cluster.js';
import { serveIpcChild, warmExporter } from './ipc-child.js';

export interface FleetReady {
  type: 'ready';
  port: number;
  exporters: { hostname: string; ip: string }[];
}

/** Exporters started at once: binding a listener is quick, but a thousand at a time is a burst of fds. */
const ADD_BATCH = 50;

let fleet: SimDcgmFleet | undefined;

async function start(): Promise<FleetReady> {
  const nodes = Number(process.env['BENCH_FLEET_NODES']);
  const bigJobNodes = Number(process.env['BENCH_FLEET_BIG_JOB_NODES'] ?? '0');
  if (!Number.isInteger(nodes) || nodes <= 0) throw new Error(`Cannot run the exporter fleet: BENCH_FLEET_NODES must be a positive integer, got "${process.env['BENCH_FLEET_NODES']}"`);
  const plan = planCluster(nodes, { bigJobNodes });
  const started = await SimDcgmFleet.start({ ipBase: process.env['BENCH_FLEET_IP_BASE'] });
  fleet = started;
  const exporters: FleetReady['exporters'] = [];
  for (let i = 0; i < plan.nodes.length; i += ADD_BATCH) {
    const handles = await Promise.all(plan.nodes.slice(i, i + ADD_BATCH).map((node) => started.add(simNodeOf(node))));
    for (const handle of handles) exporters.push({ hostname: handle.hostname, ip: handle.ip });
    // One gzip scrape each renders and compresses the payload into the exporter's cache, as a real
    // exporter has its metrics ready: the service's first tick then measures the service.
    await Promise.all(handles.map((handle) => warmExporter(handle.url)));
  }
  return { type: 'ready', port: started.port, exporters };
}

serveIpcChild('the exporter fleet', start, async () => {
  await fleet?.close();
});
