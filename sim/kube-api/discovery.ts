// API discovery of the optional groups the sim serves: the APIGroup at /apis/<group> and the
// APIResourceList at /apis/<group>/<version>, which a client reads to learn whether (and in which
// version) a cluster serves a group before it lists from it. Built from the RESOURCES table, so
// discovery never names a resource the routes do not serve.
import { DRA_GROUP, DRA_VERSION, RESOURCES, type OptionalApi, type ResourceName } from './resources.js';

// The verbs a real API server lists for these collections, though the sim itself serves only the read ones.
const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const OPTIONAL_GROUPS: Readonly<Record<OptionalApi, { group: string; version: string }>> = {
  dra: { group: DRA_GROUP, version: DRA_VERSION },
};

/** The discovery document at `pathname` (a trailing slash allowed, as clients send it), or undefined when it is none of them. */
export function discoveryDocument(pathname: string, served: ReadonlySet<OptionalApi>): unknown {
  const path = pathname.replace(/\/$/, '');
  for (const api of served) {
    const { group, version } = OPTIONAL_GROUPS[api];
    if (path === `/apis/${group}`) return apiGroup(group, version);
    if (path === `/apis/${group}/${version}`) return apiResourceList(api, `${group}/${version}`);
  }
  return undefined;
}

function apiGroup(group: string, version: string): unknown {
  const preferred = { groupVersion: `${group}/${version}`, version };
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: [preferred], preferredVersion: preferred };
}

function apiResourceList(api: OptionalApi, groupVersion: string): unknown {
  const resources = (Object.keys(RESOURCES) as ResourceName[])
    .filter((name) => RESOURCES[name].requires === api)
    .map((name) => {
      const info = RESOURCES[name];
      return { name, singularName: info.kind.toLowerCase(), namespaced: info.namespaced, kind: info.kind, verbs: VERBS };
    });
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}
