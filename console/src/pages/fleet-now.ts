// The fleet's GPUs as they are now (`now` and `grouped` of GET /v1/fleet): how many there are, how
// many are handed out, free, or out of service, in all and by GPU model.
import type { Fleet } from '../contract.js';
import { h, table, type Child } from '../dom.js';
import { formatNumber } from '../format.js';
import { meter, tiles } from '../ui.js';

/** A GPU model as the API keys it: '' gathers the nodes that do not say theirs. */
export function modelName(key: string): string {
  return key === '' ? 'no model' : key;
}

export function fleetNowView(fleet: Fleet): Child[] {
  const now = fleet.now;
  const gpus = (value: number) => formatNumber(value, 2);
  return [
    tiles([
      ['Total GPUs', gpus(now.total_gpus)],
      ['Allocated GPUs', gpus(now.allocated_gpus)],
      ['Unallocated GPUs', gpus(now.unallocated_gpus)],
      ['Unavailable GPUs', gpus(now.unavailable_gpus)],
      ['Nodes', formatNumber(now.nodes)],
      ['Nodes unavailable', formatNumber(now.nodes_unavailable)],
    ]),
    fleet.grouped.length === 0
      ? h('p', { class: 'muted' }, 'No GPU node in this organization\'s clusters.')
      : table(
          'By GPU model, now',
          ['GPU model', 'GPUs', 'Allocated', 'Share allocated', 'Unallocated', 'Unavailable', 'Nodes', 'Nodes unavailable'],
          fleet.grouped.map((g) => [
            modelName(g.key),
            gpus(g.total_gpus),
            gpus(g.allocated_gpus),
            meter(g.allocated_gpus, g.total_gpus, `${modelName(g.key)}: ${gpus(g.allocated_gpus)} of ${gpus(g.total_gpus)} GPUs allocated`),
            gpus(g.unallocated_gpus),
            gpus(g.unavailable_gpus),
            formatNumber(g.nodes),
            formatNumber(g.nodes_unavailable),
          ]),
          { class: 'fleet-models', 'data-rows': fleet.grouped.length },
        ),
  ];
}
