// `npm run demo`: the real service against a simulated world on loopback: two GPU clusters speaking
// list/watch (gpu-east as the home cluster, gpu-west as a remote kubeconfig), a dcgm-exporter on every
// node, capacity ConfigMaps, acme's prices, a local JWKS and a token per role. Jobs start, finish and
// fail while it runs. It prints the web console's sign-in link per role and curl commands ready to
// paste; Ctrl-C stops everything cleanly.
import { resolve } from 'node:path';
import { startDemo } from './demo/run-demo.js';

const devDir = resolve('.gpucap-dev/demo');
const STEP_MS = 4_000;

async function main(): Promise<void> {
  const demo = await startDemo({
    dir: devDir,
    listen: process.env.GPUCAP_LISTEN ?? '127.0.0.1:8080',
    adminListen: process.env.GPUCAP_ADMIN_LISTEN ?? '127.0.0.1:9090',
    logLevel: process.env.GPUCAP_LOG_LEVEL ?? 'warn',
  });
  const { world, tokens, service, url } = demo;
  const churn = setInterval(() => world.step(Date.now()), STEP_MS);

  const { finished, running, pending } = world.jobs;
  const out: string[] = [
    `\ngpu-capacity-api demo: ${url}   (admin: http://${service.adminAddress}/readyz, /metrics)`,
    `Clusters gpu-east (H100, home) and gpu-west (L40S and L4, remote), both acme's,`,
    `with a cordoned node, a NotReady one and a failed GPU; an L4 pool budgeted above its hardware (over-committed);`,
    `acme's prices in USD (sim/demo/prices.ts): every third node spot and cheaper, H100 on-demand cut on the 1st, energy per kWh;`,
    `${finished} finished, ${running} running and ${pending} pending Jobs`,
    `of organizations acme, globex and initech; a Job starts, finishes or fails every ${STEP_MS / 1000} s. GPU metrics are scraped every 5 s.\n`,
  ];
  out.push('The web console: open a sign-in link (the token stays in that browser tab; Sign out forgets it).');
  // The token rides in the fragment, which the browser never sends: the console takes it and wipes it from the address bar.
  for (const t of tokens) out.push(`  ${t.label.padEnd(32)} ${demo.signInLink(t)}`);
  out.push('', 'The API with curl:');
  for (const t of tokens) out.push(`export ${t.variable}='${t.token}'   # ${t.label}`);
  const as = (variable: string, org: string) => `curl -s -H "Authorization: Bearer $${variable}" -H "X-Organization-Id: ${org}"`;
  out.push(
    '',
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads?status=running&limit=5'`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/stats?time_range=last_30_days&group_by=initiative_id&queue_percentiles=95'   # with queue time (mean, p95), idle GPU-hours, efficiency, energy`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/metrics?sort_by=gpu_utilization&limit=5'`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/stats?time_range=last_7_days&interval=day&group_by=initiative_id'   # series per day and team`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/stats?group_by=failure_reason'   # why jobs failed`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/capacity'                       # with burn rate and projected exhaustion`,
    `ID=$(${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads?status=running&limit=1' | sed -E 's/.*"workload_id":"([^"]+)".*/\\1/')`,
    `${as('ACME_ADMIN', 'acme')} "${url}/v1/workloads/$ID/metrics?time_range=last_1h&percentiles=50,95,99"`,
    `${as('ACME_ADMIN', 'acme')} "${url}/v1/workloads/$ID"                  # queue_seconds; idle_gpu_hours, gpu_efficiency, energy_kwh after a minute`,
    `${as('ACME_ADMIN', 'acme')} "${url}/v1/workloads/$ID" | grep -oE '"(gpu_model|currency|cost|energy_cost|unpriced_gpu_hours)":[^,}]*'   # its cost at acme's prices`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/metrics?sort_by=idle_gpu_hours&limit=5'   # lifetime idle GPU-hours (each minute below 5 %)`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/metrics?sort_by=queue_seconds&limit=5'   # who waited longest for GPUs, pending ones so far`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/stats?time_range=this_month&group_by=initiative_id' | grep -oE '"(initiative_id|cost|idle_cost|total_cost)":[^,}]*'   # what each team's work cost`,
    `${as('ACME_ADMIN', 'acme')} -H 'Accept: text/csv' -OJ '${url}/v1/chargeback?month=${new Date().toISOString().slice(0, 7)}'   # this month's chargeback for finance, saved as its CSV file`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/fleet?time_range=today&interval=hour&group_by=gpu_model'   # the GPUs, by the hour, with their cost`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/fleet/nodes?state=cordoned'      # or not_ready: the nodes out of service`,
    `${as('ACME_LEAD', 'acme')} '${url}/v1/workloads?limit=3'                # llm and vision only`,
    `${as('ACME_MEMBER', 'acme')} '${url}/v1/capacity'                       # vision's share`,
    `${as('GLOBEX_ADMIN', 'globex')} '${url}/v1/workloads/stats?group_by=submitted_by'`,
    `curl -s '${url}/v1/health'`,
    `curl -s '${url}/v1/openapi.json' | head -c 300`,
    '',
    'The same from kubectl gpucap (docs/kubectl-gpucap.md), built once with npm run build:kubectl-plugin:',
    `GPUCAP_TOKEN=$ACME_ADMIN GPUCAP_ORG=acme dist/kubectl-gpucap.cjs top --url ${url}`,
    `GPUCAP_TOKEN=$ACME_ADMIN GPUCAP_ORG=acme dist/kubectl-gpucap.cjs capacity --url ${url}`,
    '',
    'Ctrl-C stops the demo.',
  );
  console.log(out.join('\n'));

  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (stopping) return;
      stopping = true;
      console.log('\nstopping…');
      clearInterval(churn);
      demo
        .stop()
        .then(
          () => process.exit(0),
          () => process.exit(1),
        );
    });
  }
}

main().catch((error: unknown) => {
  console.error(`demo failed: ${(error as Error).message}`);
  process.exit(1);
});
