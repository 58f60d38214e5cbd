// The chart's Grafana dashboard (grafanaDashboard.enabled), rendered by the real helm: a ConfigMap
// the Grafana sidecar picks up, holding dashboards/gpu-capacity.json as it is; its panels show
// budgets, active GPUs by team and workloads by status, and a Fleet row the fleet's GPUs and nodes by
// state; every query parses (promtool) and names only series the service exports.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { exportedMetricNames, metricNamesIn } from '../support/exported-metrics.js';
import { promtool, promtoolOrSkip } from '../support/promtool.js';
import { CHART_DIR, CI_VALUES_DIR, helmOrSkip, only, template } from './helm.js';

interface Target {
  datasource: { type: string; uid: string };
  expr: string;
  refId: string;
}
interface Panel {
  id: number;
  title: string;
  type: string;
  gridPos: { h: number; w: number; x: number; y: number };
  /** None on a row, which only heads the panels below it. */
  targets?: Target[];
  fieldConfig?: { defaults: { custom?: { stacking?: { mode: string } } } };
}
interface Dashboard {
  uid: string;
  title: string;
  templating: { list: { name: string; type: string; query: unknown; definition?: string }[] };
  panels: Panel[];
}

interface DashboardConfigMap {
  metadata: { namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  data: Record<string, string>;
}

const dashboardFile = () => readFileSync(join(CHART_DIR, 'dashboards', 'gpu-capacity.json'), 'utf8');

describe('Helm chart Grafana dashboard', function () {
  this.timeout(120_000);
  let helmBin: string;
  let dashboard: Dashboard;

  before(async function () {
    helmBin = await helmOrSkip(this);
    dashboard = JSON.parse(dashboardFile()) as Dashboard;
  });

  const queries = () => dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, ...target })));
  /** The panels of the row titled `title`: from it down to the next row. */
  const rowPanels = (title: string): Panel[] => {
    const start = dashboard.panels.findIndex((p) => p.type === 'row' && p.title === title);
    expect(start, `a row ${title}`).to.be.at.least(0);
    const rest = dashboard.panels.slice(start + 1);
    const end = rest.findIndex((p) => p.type === 'row');
    return end === -1 ? rest : rest.slice(0, end);
  };

  it('is a ConfigMap for the Grafana sidecar only when enabled, holding the dashboard file as it is', async () => {
    expect((await template(helmBin)).filter((o) => o.metadata.name.endsWith('-dashboard'))).to.deep.equal([]);
    const configMap = only(await template(helmBin, ['-f', join(CI_VALUES_DIR, 'grafana-dashboard-values.yaml')]), 'ConfigMap') as unknown as DashboardConfigMap;
    expect(configMap.metadata.namespace).to.equal('monitoring');
    expect(configMap.metadata.labels).to.include({ grafana_dashboard: '1', 'app.kubernetes.io/name': 'gpu-capacity-api' });
    expect(configMap.metadata.annotations).to.deep.equal({ grafana_folder: 'GPU' });
    expect(Object.keys(configMap.data)).to.deep.equal(['gpu-capacity.json']);
    expect(JSON.parse(configMap.data['gpu-capacity.json'] ?? '')).to.deep.equal(JSON.parse(dashboardFile()));
    const relabelled = only(await template(helmBin, ['--set', 'grafanaDashboard.enabled=true', '--set', 'grafanaDashboard.sidecarLabel=dashboards', '--set', 'grafanaDashboard.sidecarLabelValue=gpu']), 'ConfigMap');
    expect(relabelled.metadata.labels).to.include({ dashboards: 'gpu' });
    expect(relabelled.metadata.namespace).to.equal('gpucap-system');
  });

  it('shows budgets, active GPUs by team and workloads by status, per organization, from a chosen Prometheus', () => {
    expect(dashboard.uid).to.equal('gpu-capacity-api');
    expect(dashboard.templating.list.map((v) => [v.name, v.type])).to.deep.equal([
      ['datasource', 'datasource'],
      ['organization', 'query'],
      ['cluster', 'query'],
    ]);
    const titles = dashboard.panels.map((p) => p.title);
    expect(titles).to.include.members(['Budgets: share used this period', 'Budgets: GPU-hours', 'Active GPUs by team', 'Workloads by team and status']);
    expect(new Set(dashboard.panels.map((p) => p.id)).size).to.equal(dashboard.panels.length);
    for (const panel of dashboard.panels) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).to.be.at.most(24);
      if (panel.type !== 'row') expect(panel.targets?.length, panel.title).to.be.greaterThan(0);
    }
    // The fleet's gauges are by cluster, not by organization: nodes are no team's and no budget's.
    const fleet = new Set(rowPanels('Fleet').map((p) => p.title));
    for (const query of queries()) {
      expect(query.datasource, query.panel).to.deep.equal({ type: 'prometheus', uid: '${datasource}' });
      if (fleet.has(query.panel)) expect(query.expr, query.panel).to.include('cluster_id=~"$cluster"');
      else if (query.panel !== 'Service') expect(query.expr, query.panel).to.include('organization_id="$organization"');
    }
  });

  it("has a Fleet row: the GPUs by state stacked over time, and the GPU nodes by state, from the fleet's gauges", () => {
    const panels = rowPanels('Fleet');
    const fleetRow = dashboard.panels.find((p) => p.type === 'row' && p.title === 'Fleet');
    for (const panel of panels) expect(panel.gridPos.y, panel.title).to.be.greaterThan(fleetRow?.gridPos.y ?? Infinity);
    const named = (panel: Panel) => (panel.targets ?? []).flatMap((t) => metricNamesIn(t.expr));
    expect(panels.flatMap(named).filter((name) => !['gpucap_fleet_gpus', 'gpucap_fleet_nodes'].includes(name))).to.deep.equal([]);
    const byState = (metric: string) =>
      panels.find((p) => p.type === 'timeseries' && (p.targets ?? []).some((t) => t.expr.startsWith('sum by (state) ') && t.expr.includes(metric)));
    const gpusPanel = byState('gpucap_fleet_gpus{');
    const nodesPanel = byState('gpucap_fleet_nodes{');
    expect(gpusPanel?.title).to.equal('Fleet: GPUs by state');
    expect(nodesPanel?.title).to.equal('Fleet: GPU nodes by state');
    // Stacked: the states of the GPUs add up to the GPUs, those of the nodes to the nodes.
    expect(gpusPanel?.fieldConfig?.defaults.custom?.stacking?.mode).to.equal('normal');
    expect(nodesPanel?.fieldConfig?.defaults.custom?.stacking?.mode).to.equal('normal');
    // Every replica exports the same fleet: one replica's series, not their sum.
    for (const expr of panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr))) {
      expect(expr).to.match(/max without \(instance, pod\) \(gpucap_fleet_/);
    }
    const cluster = dashboard.templating.list.find((v) => v.name === 'cluster');
    expect(cluster?.definition).to.equal('label_values(gpucap_fleet_nodes, cluster_id)');
  });

  it('names only series the service exports', async () => {
    const exported = await exportedMetricNames();
    const named = [...queries().map((q) => q.expr), ...dashboard.templating.list.map((v) => v.definition ?? '')].flatMap(metricNamesIn);
    expect(named).to.include.members([
      'gpucap_budget_used_gpu_hours',
      'gpucap_budget_allocated_gpu_hours',
      'gpucap_team_active_gpus',
      'gpucap_team_workloads',
      'gpucap_fleet_gpus',
      'gpucap_fleet_nodes',
    ]);
    expect(named.filter((name) => !exported.has(name))).to.deep.equal([]);
  });

  it('has queries that parse as PromQL (promtool check rules on them as recording rules)', async function () {
    const tool = await promtoolOrSkip(this);
    const dir = mkdtempSync(join(tmpdir(), 'gpucap-dashboard-'));
    try {
      const expr = (text: string) => text.replaceAll('$organization', 'acme').replaceAll('$cluster', '.*');
      const rules = queries().map((q, i) => ({ record: `dashboard:query_${i}`, expr: expr(q.expr) }));
      writeFileSync(join(dir, 'queries.yaml'), stringify({ groups: [{ name: 'dashboard', rules }] }));
      const result = await promtool(tool, ['check', 'rules', 'queries.yaml'], dir);
      expect(result.code, result.output).to.equal(0);
      expect(result.output).to.include(`SUCCESS: ${rules.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
