// A capacity.yaml for organization acme as the service tests write it: a total-period budget, one
// H100 pool and the `llm` initiative, optionally a `vision` initiative mapped to namespaces.

export function capacityYaml(options: { organization?: string; allocated?: number; llm?: number; visionNamespaces?: string[] } = {}): string {
  return [
    `organization_id: ${options.organization ?? 'acme'}`,
    'period: total',
    `allocated_gpu_hours: ${options.allocated ?? 1000}`,
    'pools:',
    '  - pool_id: h100',
    '    name: H100 on-demand',
    '    allocated_gpu_hours: 600',
    '    instance_types: [p5.48xlarge]',
    'initiatives:',
    '  - initiative_id: llm',
    '    name: LLM Research',
    `    allocated_gpu_hours: ${options.llm ?? 300}`,
    ...(options.visionNamespaces === undefined
      ? []
      : ['  - initiative_id: vision', '    allocated_gpu_hours: 100', `    namespaces: [${options.visionNamespaces.join(', ')}]`]),
    '',
  ].join('\n');
}
