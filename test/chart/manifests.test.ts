// deploy/manifests/gpu-capacity-api.yaml is `npm run manifests`'s render of the chart defaults: it must
// equal a fresh render, so a chart change cannot leave the plain manifests behind.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { MANIFESTS_PATH, NAMESPACE, renderManifests } from '../../scripts/render-manifests.js';
import { helmOrSkip, parseObjects } from './helm.js';

describe('deploy/manifests/gpu-capacity-api.yaml', function () {
  this.timeout(60_000);
  let helmBin: string;

  before(async function () {
    helmBin = await helmOrSkip(this);
  });

  it('equals a fresh render of the chart defaults (run `npm run manifests` after changing the chart)', () => {
    const committed = readFileSync(MANIFESTS_PATH, 'utf8');
    expect(committed === renderManifests(helmBin), `${MANIFESTS_PATH} is out of date: run \`npm run manifests\``).to.equal(true);
  });

  it('starts with a header saying it is generated and how, and holds the default objects in namespace gpu-capacity-api', () => {
    const committed = readFileSync(MANIFESTS_PATH, 'utf8');
    expect(committed.split('\n')[0]).to.match(/^# Generated from charts\/gpu-capacity-api/);
    expect(committed).to.include('`npm run manifests`');
    const objects = parseObjects(committed);
    expect(objects.map((object) => object.kind).sort()).to.deep.equal(
      ['ClusterRole', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRoleBinding', 'ClusterRoleBinding', 'Deployment', 'NetworkPolicy', 'PersistentVolumeClaim', 'Role', 'RoleBinding', 'Secret', 'Service', 'Service', 'ServiceAccount'].sort(),
    );
    for (const object of objects) if (!object.kind.startsWith('Cluster')) expect(object.metadata.namespace, object.kind).to.equal(NAMESPACE);
    expect(objects.find((object) => object.kind === 'Deployment')?.metadata.name).to.equal('gpu-capacity-api');
  });
});
