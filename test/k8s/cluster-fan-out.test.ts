// The consumers of each cluster's events: every event reaches each of them in order, and they are let
// go in that order, one after the other, so that the indexer's last write precedes the lock's release.
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import { fanOutClusters, type ClusterConsumer, type ClusterRef } from '../../src/k8s/cluster-fan-out.js';

interface Recorded {
  log: string[];
  consumer(name: string, options?: { detachMs?: number }): ClusterConsumer;
}

function recording(): Recorded {
  const log: string[] = [];
  return {
    log,
    consumer: (name, options = {}) => ({
      attach: (cluster: ClusterRef) => {
        const organization = cluster.organizationId === undefined ? '' : ` (${cluster.organizationId})`;
        log.push(`${name} attached ${cluster.clusterId}${organization}`);
        return {
          onEvent: (resource, event, namespace) =>
            void log.push(`${name} ${cluster.clusterId} ${resource} ${event.type} ${namespace ?? '-'}`),
          detach: async () => {
            log.push(`${name} detaching ${cluster.clusterId}`);
            if (options.detachMs !== undefined) await delay(options.detachMs);
            log.push(`${name} detached ${cluster.clusterId}`);
          },
        };
      },
    }),
  };
}

describe('k8s/cluster-fan-out', () => {
  it('attaches a cluster to every consumer in order and gives each event to all of them, namespace included', () => {
    const { log, consumer } = recording();
    const attach = fanOutClusters([consumer('indexer'), consumer('writer'), consumer('telemetry')]);
    const east = attach({ clusterId: 'east', organizationId: 'acme' });
    east.onEvent('pods', { type: 'SYNC', items: [], resourceVersion: '1' }, 'llm');
    east.onEvent('namespaces', { type: 'PAGE', items: [], first: true }, undefined);
    expect(log).to.deep.equal([
      'indexer attached east (acme)',
      'writer attached east (acme)',
      'telemetry attached east (acme)',
      'indexer east pods SYNC llm',
      'writer east pods SYNC llm',
      'telemetry east pods SYNC llm',
      'indexer east namespaces PAGE -',
      'writer east namespaces PAGE -',
      'telemetry east namespaces PAGE -',
    ]);
  });

  it('detaches in the same order, each consumer once the one before it has settled', async () => {
    const { log, consumer } = recording();
    const attach = fanOutClusters([consumer('indexer', { detachMs: 20 }), consumer('writer', { detachMs: 5 }), consumer('telemetry')]);
    const east = attach({ clusterId: 'east' });
    log.splice(0);
    await east.detach();
    expect(log).to.deep.equal([
      'indexer detaching east',
      'indexer detached east',
      'writer detaching east',
      'writer detached east',
      'telemetry detaching east',
      'telemetry detached east',
    ]);
  });

  it('keeps each cluster to itself: events and detach of one never reach another', async () => {
    const { log, consumer } = recording();
    const attach = fanOutClusters([consumer('indexer')]);
    const east = attach({ clusterId: 'east' });
    const west = attach({ clusterId: 'west' });
    log.splice(0);
    west.onEvent('jobs', { type: 'ADDED', object: { metadata: { name: 'train' } }, resourceVersion: '2' }, 'llm');
    await east.detach();
    expect(log).to.deep.equal(['indexer west jobs ADDED llm', 'indexer detaching east', 'indexer detached east']);
  });

  it('with no consumer, takes events and detaches without doing anything', async () => {
    const east = fanOutClusters([])({ clusterId: 'east' });
    east.onEvent('nodes', { type: 'SYNC', items: [], resourceVersion: '1' }, undefined);
    await east.detach();
  });
});
