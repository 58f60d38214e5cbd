// GET /v1/chargeback: the month's statement for finance, ORG_ADMIN only.
import { scopeOf } from '../../access/principal.js';
import { chargeback } from '../../query/chargeback.js';
import { presentChargeback } from '../chargeback-presenter.js';
import { principalOf } from '../context.js';
import { chargebackCsv } from '../csv/chargeback-csv.js';
import { defineEndpoint, type EndpointRequest } from '../endpoint.js';
import { Chargeback } from '../schemas/chargeback.js';
import { ChargebackQuery } from '../schemas/query.js';
import { Envelope } from '../schemas/responses.js';

export const chargebackEndpoint = defineEndpoint({
  operationId: 'getChargeback',
  path: '/v1/chargeback',
  summary: 'The monthly statement',
  description:
    'Addition: each team\'s GPU time inside a UTC month and its cost, priced at the rates in force when it was used ' +
    '(pods clipped to the month, whenever their workloads were submitted), with idle time and energy, the fleet\'s ' +
    'unallocated GPU-hours, and the total (docs/capacity.md, "Chargeback"). Amounts are rounded so that the rows add up ' +
    'to the total in every money column (`rounding`). Without prices every amount is null. ' +
    'ORG_ADMIN only: it bills every team (TEAM_LEAD and MEMBER get FORBIDDEN). With Accept: text/csv, the statement ' +
    'as chargeback-<organization>-<YYYY-MM>.csv.',
  authenticated: true,
  query: ChargebackQuery,
  response: Envelope(Chargeback),
  errors: ['VALIDATION_ERROR', 'FORBIDDEN'],
  async handle(request) {
    return { body: { data: await presentedChargeback(request) } };
  },
  async csv(request) {
    return chargebackCsv(await presentedChargeback(request));
  },
});

async function presentedChargeback({ ctx, query, deps }: EndpointRequest<typeof ChargebackQuery>) {
  const result = await chargeback(
    deps,
    scopeOf(principalOf(ctx)),
    { month: query.month, groupBy: query.group_by, shareIdle: query.share_idle },
    deps.clock.now(),
  );
  return presentChargeback(result);
}
