// Child process entry (started by full-scale-fleet.ts): the full-scale benchmark's dcgm-exporters, one
// per node of every simulated cluster, each reporting the GPUs its cluster attributed to the pods it
// runs on that node (full-scale-exporters.ts). One SimDcgmFleet per cluster, all on one port: node
// names repeat from cluster to cluster, and a fleet's hostnames must be unique, while the service is
// configured with one exporter port for every cluster, as in production. Apart from the measured
// service so that rendering and serving 1,250 exporters does not share its event loop.
// Protocol: full-scale-fleet-protocol.ts, over ipc-child.ts's handshake.
import { readFileSync } from 'node:fs';
import { SimDcgmFleet } from '../../../sim/dcgm-exporter/fleet.js';
import type { SimGpu, SimNodeGpus } from '../../../sim/dcgm-exporter/types.js';
import type { ExporterNode } from './full-scale-exporters.js';
import { PLAN_VARIABLE, type FleetPlan, type FullScaleFleetReady } from './full-scale-fleet-protocol.js';
import { serveIpcChild, warmExporter } from './ipc-child.js';

/** Exporters started at once: binding a listener is quick, but a thousand at a time is a burst of fds. */
const ADD_BATCH = 50;
/** The generated pods' container name (generate-cluster.ts). */
const CONTAINER = 'trainer';

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** The exporter's view of a node: GPU uuids unique over the whole fleet, each GPU's pod by the plan. */
function simNodeOf(node: ExporterNode, cluster: number, index: number): SimNodeGpus {
  return {
    hostname: node.hostname,
    gpus: node.gpus.map((holder, gpu): SimGpu => ({
      index: gpu,
      uuid: `GPU-${hex(cluster, 8)}-${hex(index, 4)}-4${hex(gpu, 3)}-8000-${hex(index * node.gpus.length + gpu, 12)}`,
      modelName: node.modelName,
      ...(holder === null ? {} : { pod: { namespace: holder[0], pod: holder[1], container: CONTAINER } }),
    })),
  };
}

const fleets: SimDcgmFleet[] = [];

async function start(): Promise<FullScaleFleetReady> {
  const planFile = process.env[PLAN_VARIABLE];
  if (planFile === undefined) throw new Error(`Cannot run the exporter fleet: ${PLAN_VARIABLE} is not set`);
  const plan = JSON.parse(readFileSync(planFile, 'utf8')) as FleetPlan;
  let port: number | undefined;
  const ready: FullScaleFleetReady = { type: 'ready', port: 0, exporters: 0, gpus: 0, attributedGpus: 0 };
  for (const [clusterIndex, cluster] of plan.clusters.entries()) {
    const fleet = await SimDcgmFleet.start({ ipBase: cluster.ipBase, port });
    fleets.push(fleet);
    port = fleet.port;
    for (let i = 0; i < cluster.nodes.length; i += ADD_BATCH) {
      const batch = cluster.nodes.slice(i, i + ADD_BATCH);
      const handles = await Promise.all(batch.map((node, k) => fleet.add(simNodeOf(node, clusterIndex, i + k))));
      // The exporter pods announce these addresses: an exporter elsewhere would never be scraped.
      for (const [k, handle] of handles.entries()) {
        const node = batch[k] as ExporterNode;
        if (handle.ip !== node.ip) throw new Error(`Exporter of ${node.hostname} listens on ${handle.ip}, but its pod announces ${node.ip} (an address of the range was taken?)`);
      }
      // One gzip scrape renders and compresses each payload into the exporter's cache, as a real
      // exporter has its metrics ready: the service's first tick then measures the service.
      await Promise.all(handles.map((handle) => warmExporter(handle.url)));
    }
    ready.exporters += cluster.nodes.length;
    for (const node of cluster.nodes) {
      ready.gpus += node.gpus.length;
      ready.attributedGpus += node.gpus.filter((holder) => holder !== null).length;
    }
  }
  if (port === undefined) throw new Error('The plan has no cluster');
  return { ...ready, port };
}

serveIpcChild('the exporter fleet', start, async () => {
  await Promise.all(fleets.map((fleet) => fleet.close()));
});
