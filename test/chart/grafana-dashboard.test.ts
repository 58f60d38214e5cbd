// The chart's Grafana dashboard (grafanaDashboard.enabled), rendered by the real helm: a ConfigMap
// the Grafana sidecar picks up, holding dashboards/gpu-capacity.json as it is; its panels show
// budgets, active GPUs by team and workloads by status; every query parses (promtool) and names only
// series the service exports.
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
  targets: Target[];
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

  const queries = () => dashboard.panels.flatMap((panel) => panel.targets.map((target) => ({ panel: panel.title, ...target })));

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
    expect(dashboard.templating.list.map((v) => [v.name, v.type])).to.deep.equal([['datasource', 'datasource'], ['organization', 'query']]);
    const titles = dashboard.panels.map((p) => p.title);
    expect(titles).to.include.members(['Budgets: share used this period', 'Budgets: GPU-hours', 'Active GPUs by team', 'Workloads by team and status']);
    expect(new Set(dashboard.panels.map((p) => p.id)).size).to.equal(dashboard.panels.length);
    for (const panel of dashboard.panels) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).to.be.at.most(24);
      expect(panel.targets.length, panel.title).to.be.greaterThan(0);
    }
    for (const query of queries()) {
      expect(query.datasource, query.panel).to.deep.equal({ type: 'prometheus', uid: '${datasource}' });
      if (query.panel !== 'Service') expect(query.expr, query.panel).to.include('organization_id="$organization"');
    }
  });

  it('names only series the service exports', async () => {
    const exported = await exportedMetricNames();
    const named = [...queries().map((q) => q.expr), ...dashboard.templating.list.map((v) => v.definition ?? '')].flatMap(metricNamesIn);
    expect(named).to.include.members(['gpucap_budget_used_gpu_hours', 'gpucap_budget_allocated_gpu_hours', 'gpucap_team_active_gpus', 'gpucap_team_workloads']);
    expect(named.filter((name) => !exported.has(name))).to.deep.equal([]);
  });

  it('has queries that parse as PromQL (promtool check rules on them as recording rules)', async function () {
    const tool = await promtoolOrSkip(this);
    const dir = mkdtempSync(join(tmpdir(), 'gpucap-dashboard-'));
    try {
      const rules = queries().map((q, i) => ({ record: `dashboard:query_${i}`, expr: q.expr.replaceAll('$organization', 'acme') }));
      writeFileSync(join(dir, 'queries.yaml'), stringify({ groups: [{ name: 'dashboard', rules }] }));
      const result = await promtool(tool, ['check', 'rules', 'queries.yaml'], dir);
      expect(result.code, result.output).to.equal(0);
      expect(result.output).to.include(`SUCCESS: ${rules.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
