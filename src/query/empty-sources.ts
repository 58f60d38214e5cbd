// What the read side answers before the telemetry and capacity sources exist or have data:
// "no samples" (null summaries) and "no budgets" (DECISIONS "Metrics" and "Capacity"), never invented numbers.
import { EMPTY_SUMMARY, type MetricName, type MetricSummary } from '../domain/metrics.js';
import type { BudgetSource, TelemetryReader } from './ports.js';

export const noTelemetry: TelemetryReader = {
  async summarize({ metrics }) {
    const result = {} as Record<MetricName, MetricSummary>;
    for (const name of metrics) result[name] = { ...EMPTY_SUMMARY };
    return result;
  },
  async lastHour() {
    return new Map();
  },
};

export const noBudgets: BudgetSource = {
  budgetFor() {
    return undefined;
  },
  budgets() {
    return [];
  },
};
