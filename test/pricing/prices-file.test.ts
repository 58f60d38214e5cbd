import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { PRICES_SCHEMA_PATH, renderPricesSchema } from '../../scripts/capacity-schema.js';
import { parsePricesFile, PricesFileError } from '../../src/capacity/prices-file.js';

const SOURCE = 'ConfigMap gpu-system/prices-acme';

function problemsOf(text: string): string[] {
  try {
    parsePricesFile(text, SOURCE);
  } catch (error) {
    expect(error).to.be.instanceOf(PricesFileError);
    return (error as PricesFileError).problems;
  }
  throw new Error('the file was accepted');
}

const HEADER = 'organization_id: acme\ncurrency: USD\n';

describe('prices.yaml', () => {
  it('reads the currency, its minor units, the rates with their times and the energy rate', () => {
    const table = parsePricesFile(
      `${HEADER}energy_rate_per_kwh: 0.12
gpu_hour_rates:
  - gpu_model: NVIDIA-H100-80GB-HBM3
    rate_per_gpu_hour: 3.5
    effective_from: 2026-01-01
    effective_to: "2026-10-01T00:00:00Z"
  - gpu_model: NVIDIA-H100-80GB-HBM3
    capacity_type: spot
    cluster_id: eu-1
    rate_per_gpu_hour: 1.25
    effective_from: 2026-10-01T02:00:00+02:00
`,
      SOURCE,
    );
    expect(table).to.deep.equal({
      organizationId: 'acme',
      currency: 'USD',
      minorUnits: 2,
      energyRatePerKwh: 0.12,
      gpuHourRates: [
        {
          index: 0, match: { gpuModel: 'NVIDIA-H100-80GB-HBM3' }, ratePerGpuHour: 3.5,
          effectiveFrom: Date.parse('2026-01-01T00:00:00Z'), effectiveTo: Date.parse('2026-10-01T00:00:00Z'),
        },
        {
          index: 1, match: { gpuModel: 'NVIDIA-H100-80GB-HBM3', capacityType: 'spot', clusterId: 'eu-1' }, ratePerGpuHour: 1.25,
          effectiveFrom: Date.parse('2026-10-01T00:00:00Z'), effectiveTo: null,
        },
      ],
    });
  });

  it('takes the minor units of the currency from ISO 4217 as the runtime knows it', () => {
    const rate = 'gpu_hour_rates:\n  - rate_per_gpu_hour: 400\n    effective_from: 2026-01-01\n';
    expect(parsePricesFile(`organization_id: acme\ncurrency: JPY\n${rate}`, SOURCE).minorUnits).to.equal(0);
    expect(parsePricesFile(`organization_id: acme\ncurrency: BHD\n${rate}`, SOURCE).minorUnits).to.equal(3);
    expect(parsePricesFile(`organization_id: acme\ncurrency: EUR\n${rate}`, SOURCE).energyRatePerKwh).to.equal(null);
  });

  it('names every problem of the schema at once, by its path', () => {
    const problems = problemsOf(`organization_id: acme
currency: usd
gpu_hour_rates:
  - gpu_model: H100
    rate_per_gpu_hour: "3"
    effective_from: yesterday
    capacity_type: preemptible
    zone: a
`);
    expect(problems).to.include('"currency" must be an ISO 4217 code: three capital letters such as "USD", got "usd"');
    expect(problems).to.include('"gpu_hour_rates[0].rate_per_gpu_hour" must be a number, got the string "3"');
    expect(problems).to.include(
      '"gpu_hour_rates[0].effective_from" must be a UTC time such as "2026-10-01T00:00:00Z" or a date such as "2026-10-01", got "yesterday"',
    );
    expect(problems).to.include('"gpu_hour_rates[0].capacity_type" must be one of on-demand, spot, reserved, got "preemptible"');
    expect(problems.some((p) => p.startsWith('"gpu_hour_rates[0].zone" is not a known key'))).to.equal(true);
  });

  it('refuses an unknown currency, times inside an hour, and an end not after the start', () => {
    const problems = problemsOf(`organization_id: acme
currency: XYZ
gpu_hour_rates:
  - rate_per_gpu_hour: 1
    effective_from: 2026-01-01T00:30:00Z
  - rate_per_gpu_hour: 1
    gpu_model: A100
    effective_from: 2026-02-01
    effective_to: 2026-02-01
`);
    expect(problems).to.deep.equal([
      '"currency" must be an ISO 4217 currency code, got "XYZ"',
      '"gpu_hour_rates[0].effective_from" must be a whole UTC hour (minutes and seconds 0 in UTC), got "2026-01-01T00:30:00Z"',
      '"gpu_hour_rates[1].effective_to" must be after effective_from (2026-02-01), got "2026-02-01"',
    ]);
  });

  it('refuses two rates that name as many fields and can match one GPU at one time', () => {
    const problems = problemsOf(`${HEADER}gpu_hour_rates:
  - gpu_model: H100
    rate_per_gpu_hour: 3
    effective_from: 2026-01-01
  - capacity_type: spot
    rate_per_gpu_hour: 1
    effective_from: 2026-06-01
    effective_to: 2026-07-01
  - gpu_model: A100
    rate_per_gpu_hour: 2
    effective_from: 2026-01-01
  - gpu_model: H100
    rate_per_gpu_hour: 2.5
    effective_from: 2025-01-01
    effective_to: 2026-01-01
`);
    // H100 and spot can both match a spot H100 in June; A100 and H100 never match one GPU; the two
    // H100 rates follow each other.
    expect(problems).to.deep.equal([
      '"gpu_hour_rates[1]" ties with gpu_hour_rates[0]: both name 1 field (gpu_model, capacity_type) and can match the same GPU ' +
        'from 2026-06-01T00:00:00Z to 2026-07-01T00:00:00Z; name one more field in one of them, or end one before the other begins',
      '"gpu_hour_rates[2]" ties with gpu_hour_rates[1]: both name 1 field (gpu_model, capacity_type) and can match the same GPU ' +
        'from 2026-06-01T00:00:00Z to 2026-07-01T00:00:00Z; name one more field in one of them, or end one before the other begins',
    ]);
    expect(problemsOf(`${HEADER}gpu_hour_rates:
  - rate_per_gpu_hour: 3
    effective_from: 2026-01-01
  - rate_per_gpu_hour: 2
    effective_from: 2026-03-01
`)).to.deep.equal([
      '"gpu_hour_rates[1]" ties with gpu_hour_rates[0]: both name no field and can match the same GPU from 2026-03-01T00:00:00Z on; ' +
        'name one more field in one of them, or end one before the other begins',
    ]);
  });

  it('refuses an empty file, a list, and bad YAML, as capacity.yaml does', () => {
    expect(problemsOf('')).to.deep.equal(['the file is empty: it must hold a mapping with at least organization_id, currency and gpu_hour_rates']);
    expect(problemsOf('- a\n')).to.deep.equal(['the file must hold a mapping (organization_id: …), got a list']);
    expect(problemsOf('a: [\n')[0]).to.match(/^YAML syntax error at line \d+, column \d+/);
    expect(problemsOf(HEADER)).to.deep.equal(['"gpu_hour_rates" is required']);
  });
});

describe('docs/prices.schema.json', () => {
  it('is what `npm run docs:capacity-schema` generates from the schema the service validates with', () => {
    const committed = readFileSync(PRICES_SCHEMA_PATH, 'utf8');
    expect(committed, 'docs/prices.schema.json is out of date: run npm run docs:capacity-schema').to.equal(renderPricesSchema());
    expect((JSON.parse(committed) as { $id: string }).$id).to.equal('https://gpucap.io/schemas/prices.schema.json');
  });
});
