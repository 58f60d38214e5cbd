// The chart's PrometheusRule (prometheusRule.enabled), rendered by the real helm: off by default,
// valid for `promtool check rules`, each alert unit-tested by `promtool test rules`
// (fixtures/prometheus-rules.test.yaml), and every series it names exported by the service.
import { expect } from 'chai';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { exportedMetricNames, metricNamesIn } from '../support/exported-metrics.js';
import { promtool, promtoolOrSkip } from '../support/promtool.js';
import { helmOrSkip, only, template, type RenderedObject } from './helm.js';

const FIXTURE = new URL('./fixtures/prometheus-rules.test.yaml', import.meta.url);

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
type RuleObject = RenderedObject & { spec: { groups: { name: string; rules: Rule[] }[] } };

describe('Helm chart PrometheusRule', function () {
  this.timeout(120_000);
  let helmBin: string;
  let rule: RuleObject;
  let dir: string;

  before(async function () {
    helmBin = await helmOrSkip(this);
    rule = only(await template(helmBin, ['--set', 'prometheusRule.enabled=true']), 'PrometheusRule') as RuleObject;
    dir = mkdtempSync(join(tmpdir(), 'gpucap-rules-'));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: rule.spec.groups }));
    copyFileSync(FIXTURE, join(dir, 'tests.yaml'));
  });
  after(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const alerts = () => rule.spec.groups.flatMap((g) => g.rules);

  it('is rendered only when enabled, with its labels', async () => {
    expect((await template(helmBin)).filter((o) => o.kind === 'PrometheusRule')).to.deep.equal([]);
    const labelled = only(await template(helmBin, ['--set', 'prometheusRule.enabled=true', '--set', 'prometheusRule.labels.release=kube-prometheus-stack']), 'PrometheusRule');
    expect(labelled.metadata.labels).to.include({ release: 'kube-prometheus-stack', 'app.kubernetes.io/name': 'gpu-capacity-api' });
    expect(rule.apiVersion).to.equal('monitoring.coreos.com/v1');
  });

  it('alerts on each condition the service can be in trouble with, each with a severity and a summary', () => {
    expect(alerts().map((a) => a.alert)).to.deep.equal([
      'GpucapBudgetNearlyExhausted', 'GpucapBudgetExhausted', 'GpucapClusterUnreachable', 'GpucapExportersFailing',
      'GpucapIndexWritesFailing', 'GpucapNotReady', 'GpucapAggregatesMissing',
    ]);
    for (const alert of alerts()) {
      expect(alert.labels.severity, alert.alert).to.be.oneOf(['warning', 'critical']);
      expect(alert.annotations.summary, alert.alert).to.be.a('string').and.not.equal('');
    }
  });

  it('passes promtool check rules', async function () {
    const result = await promtool(await promtoolOrSkip(this), ['check', 'rules', 'rules.yaml'], dir);
    expect(result.code, result.output).to.equal(0);
    expect(result.output).to.include('SUCCESS: 7 rules found');
  });

  it('passes promtool test rules: each alert fires when it should and not before', async function () {
    const result = await promtool(await promtoolOrSkip(this), ['test', 'rules', 'tests.yaml'], dir);
    expect(result.code, result.output).to.equal(0);
  });

  it('takes its thresholds and extra alert labels from the values', async () => {
    const values = join(dir, 'values.yaml');
    writeFileSync(values, stringify({ prometheusRule: { enabled: true, budgetWarningRatio: 0.9, exporterFailureRatio: 0.25, additionalAlertLabels: { team: 'platform' } } }));
    const tuned = (only(await template(helmBin, ['-f', values]), 'PrometheusRule') as RuleObject).spec.groups.flatMap((g) => g.rules);
    expect(tuned.find((a) => a.alert === 'GpucapBudgetNearlyExhausted')?.expr).to.match(/>= 0\.9 < 1$/);
    expect(tuned.find((a) => a.alert === 'GpucapExportersFailing')?.expr).to.match(/> 0\.25$/);
    for (const alert of tuned) expect(alert.labels, alert.alert).to.include({ team: 'platform' });
  });

  it('names only series the service exports (and Prometheus\' up)', async () => {
    const exported = await exportedMetricNames();
    const named = alerts().flatMap((a) => metricNamesIn(a.expr));
    expect(named).to.include.members(['gpucap_budget_used_gpu_hours', 'gpucap_cluster_up', 'gpucap_exporter_gpus_failing', 'gpucap_ready', 'up']);
    expect(named.filter((name) => name !== 'up' && !exported.has(name))).to.deep.equal([]);
  });
});
