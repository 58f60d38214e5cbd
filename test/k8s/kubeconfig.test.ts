// Where the credentials of a cluster come from, and what an operator reads when they are wrong: every
// message names the kubeconfig it is about, so a broken Secret or a stray file is found from the log.
import { join } from 'node:path';
import { expect } from 'chai';
import { homeKubeconfig, kubeconfigFromText, type HomeKubeconfigOptions } from '../../src/k8s/kubeconfig.js';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

interface KubeconfigShape {
  currentContext?: string;
  context?: { name?: string; cluster: string; user?: string };
  cluster?: { name?: string; server?: string; insecureSkipTlsVerify?: boolean };
  user?: string;
}

/** A kubeconfig (YAML) with one context, one cluster and one user unless told otherwise. */
function aKubeconfig(shape: KubeconfigShape = {}): string {
  const contextName = shape.context?.name ?? 'gpu-west';
  const context = shape.context ?? { name: contextName, cluster: 'west', user: 'reader' };
  const cluster = shape.cluster ?? { name: 'west', server: 'https://west.example:6443' };
  const lines = ['apiVersion: v1', 'kind: Config'];
  if (shape.currentContext !== '') lines.push(`current-context: ${JSON.stringify(shape.currentContext ?? contextName)}`);
  lines.push('contexts:', `- name: ${JSON.stringify(contextName)}`, '  context:', `    cluster: ${JSON.stringify(context.cluster)}`);
  if (context.user !== undefined) lines.push(`    user: ${JSON.stringify(context.user)}`);
  lines.push('clusters:', `- name: ${JSON.stringify(cluster.name ?? 'west')}`, '  cluster:');
  if (cluster.server !== undefined) lines.push(`    server: ${JSON.stringify(cluster.server)}`);
  if (cluster.insecureSkipTlsVerify === true || cluster.server === undefined) lines.push('    insecure-skip-tls-verify: true');
  lines.push('users:', `- name: ${JSON.stringify(shape.user ?? 'reader')}`, '  user:', '    token: t0ken');
  return `${lines.join('\n')}\n`;
}

describe('kubeconfigFromText', () => {
  it('returns the current context name, the origin and a config pointing at the server', () => {
    const loaded = kubeconfigFromText(aKubeconfig(), '/etc/clusters/west.kubeconfig');
    expect(loaded.contextName).to.equal('gpu-west');
    expect(loaded.origin).to.equal('/etc/clusters/west.kubeconfig');
    expect(loaded.kubeConfig.getCurrentCluster()?.server).to.equal('https://west.example:6443');
  });

  it('accepts a context without a user (client certificates come from elsewhere)', () => {
    const loaded = kubeconfigFromText(aKubeconfig({ context: { name: 'gpu-west', cluster: 'west' } }), 'west.kubeconfig');
    expect(loaded.contextName).to.equal('gpu-west');
  });

  it('accepts a plain http server (kubectl proxy)', () => {
    const loaded = kubeconfigFromText(aKubeconfig({ cluster: { name: 'west', server: 'http://127.0.0.1:8001', insecureSkipTlsVerify: true } }), 'west.kubeconfig');
    expect(loaded.kubeConfig.getCurrentCluster()?.server).to.equal('http://127.0.0.1:8001');
  });

  it('rejects a plain http server without insecure-skip-tls-verify, which the client would refuse on every request', () => {
    expect(() => kubeconfigFromText(aKubeconfig({ cluster: { name: 'west', server: 'http://west.example:8080' } }), 'west.kubeconfig')).to.throw(
      'Kubeconfig "west.kubeconfig": cluster "west" uses plain http ("http://west.example:8080"), which the client refuses unless insecure-skip-tls-verify is true',
    );
  });

  it('rejects an empty file as empty', () => {
    expect(() => kubeconfigFromText(' \n', '/etc/clusters/blank')).to.throw('Kubeconfig "/etc/clusters/blank" is empty');
  });

  it('rejects text that is not YAML, naming the file and the parser error', () => {
    expect(() => kubeconfigFromText('clusters: [unclosed', '/etc/clusters/broken')).to.throw(
      /^Cannot read kubeconfig "\/etc\/clusters\/broken": unexpected end of the stream/,
    );
  });

  it('gives the error code KUBECONFIG_INVALID so callers can map on it', () => {
    expect(() => kubeconfigFromText('clusters: [unclosed', 'broken')).to.throw().with.property('code', 'KUBECONFIG_INVALID');
  });

  it('keeps only the first line of a multi-line parser error', () => {
    // The YAML parser's message goes on with a code excerpt over several lines.
    expect(() => kubeconfigFromText('a: 1\n  b: 2\n', 'bad-indent')).to.throw(/^Cannot read kubeconfig "bad-indent": bad indentation of a mapping entry \(2:4\)$/);
  });

  it('rejects a kubeconfig without a current-context', () => {
    expect(() => kubeconfigFromText(aKubeconfig({ currentContext: '' }), '/etc/clusters/west')).to.throw('Kubeconfig "/etc/clusters/west" has no current-context');
  });

  it('rejects a YAML file that is not a kubeconfig at all as having no current-context', () => {
    expect(() => kubeconfigFromText('Put one kubeconfig per cluster here.\n', 'README')).to.throw('Kubeconfig "README" has no current-context');
  });

  it('rejects a current-context that is not among the contexts', () => {
    expect(() => kubeconfigFromText(aKubeconfig({ currentContext: 'gpu-east' }), 'west')).to.throw(
      'Kubeconfig "west": current-context "gpu-east" is not among its contexts',
    );
  });

  it('rejects a context naming a cluster the file does not define', () => {
    expect(() => kubeconfigFromText(aKubeconfig({ context: { name: 'gpu-west', cluster: 'east', user: 'reader' } }), 'west')).to.throw(
      'Kubeconfig "west": context "gpu-west" names cluster "east", which it does not define',
    );
  });

  it('rejects a cluster without a server URL, naming the file', () => {
    expect(() => kubeconfigFromText(aKubeconfig({ cluster: { name: 'west' } }), 'west')).to.throw(/^Cannot read kubeconfig "west": .*server is missing/);
  });

  it('rejects a server URL without an http or https scheme, quoting it', () => {
    expect(() => kubeconfigFromText(aKubeconfig({ cluster: { name: 'west', server: 'west.example:6443' } }), 'west')).to.throw(
      'Kubeconfig "west": cluster "west" needs a server URL (https://host:port), got "west.example:6443"',
    );
    expect(() => kubeconfigFromText(aKubeconfig({ cluster: { name: 'west', server: 'ftp://west.example' } }), 'west')).to.throw(
      'got "ftp://west.example"',
    );
  });

  it('rejects a server URL without a host', () => {
    expect(() => kubeconfigFromText(aKubeconfig({ cluster: { name: 'west', server: 'https://' } }), 'west')).to.throw(
      /^Kubeconfig "west": cluster "west" needs a server URL/,
    );
  });

  it('rejects a context naming a user the file does not define', () => {
    expect(() => kubeconfigFromText(aKubeconfig({ user: 'someone-else' }), 'west')).to.throw(
      'Kubeconfig "west": context "gpu-west" names user "reader", which it does not define',
    );
  });
});

describe('homeKubeconfig', () => {
  const inPod = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

  /** A file system of the given files; records which paths were read and which were checked. */
  function files(contents: Record<string, string>): Pick<HomeKubeconfigOptions, 'readFile' | 'exists'> & { read: string[] } {
    const read: string[] = [];
    return {
      read,
      readFile: (path) => {
        read.push(path);
        const text = contents[path];
        if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
        return text;
      },
      exists: (path) => path in contents,
    };
  }

  const named = (context: string): string => aKubeconfig({ context: { name: context, cluster: 'west', user: 'reader' } });

  it('uses GPUCAP_KUBECONFIG before anything else, even inside a pod with a service account', () => {
    const fs = files({ '/etc/gpucap/home': named('from-file'), [SERVICE_ACCOUNT_TOKEN]: 'token', '/kc/env': named('from-env') });
    const loaded = homeKubeconfig({ file: '/etc/gpucap/home', env: { ...inPod, KUBECONFIG: '/kc/env' }, home: '/home/op', ...fs });
    expect(loaded).to.include({ contextName: 'from-file', origin: '/etc/gpucap/home' });
    expect(fs.read).to.deep.equal(['/etc/gpucap/home']);
  });

  it('uses the in-cluster service account when KUBERNETES_SERVICE_HOST and PORT are set and the token exists, before $KUBECONFIG', () => {
    const fs = files({ [SERVICE_ACCOUNT_TOKEN]: 'token', '/kc/env': named('from-env') });
    const loaded = homeKubeconfig({ env: { ...inPod, KUBECONFIG: '/kc/env' }, home: '/home/op', ...fs });
    expect(loaded.origin).to.equal('in-cluster service account');
    expect(fs.read).to.deep.equal([]);
  });

  it('points the in-cluster config at the API server named by the env it was given', () => {
    const fs = files({ [SERVICE_ACCOUNT_TOKEN]: 'token' });
    const loaded = homeKubeconfig({ env: inPod, home: '/home/op', ...fs });
    expect(loaded.kubeConfig.getCurrentCluster()?.server).to.equal('https://10.96.0.1:443');
  });

  it('skips the service account when its token file does not exist', () => {
    const fs = files({ '/kc/env': named('from-env') });
    const loaded = homeKubeconfig({ env: { ...inPod, KUBECONFIG: '/kc/env' }, home: '/home/op', ...fs });
    expect(loaded).to.include({ contextName: 'from-env', origin: '/kc/env' });
  });

  it('skips the service account when KUBERNETES_SERVICE_PORT is not set', () => {
    const fs = files({ [SERVICE_ACCOUNT_TOKEN]: 'token', '/kc/env': named('from-env') });
    const loaded = homeKubeconfig({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBECONFIG: '/kc/env' }, home: '/home/op', ...fs });
    expect(loaded.origin).to.equal('/kc/env');
  });

  it('uses the first non-empty entry of $KUBECONFIG, before ~/.kube/config', () => {
    const fs = files({ '/kc/first': named('first'), '/kc/second': named('second'), '/home/op/.kube/config': named('user') });
    const loaded = homeKubeconfig({ env: { KUBECONFIG: ':/kc/first:/kc/second' }, home: '/home/op', ...fs });
    expect(loaded).to.include({ contextName: 'first', origin: '/kc/first' });
  });

  it('uses ~/.kube/config under the given home when nothing else is set', () => {
    const fs = files({ '/home/op/.kube/config': named('user') });
    const loaded = homeKubeconfig({ env: { KUBECONFIG: '' }, home: '/home/op', ...fs });
    expect(loaded).to.include({ contextName: 'user', origin: join('/home/op', '.kube', 'config') });
  });

  it('says where it looked when no kubeconfig is found', () => {
    const fs = files({});
    expect(() => homeKubeconfig({ env: {}, home: '/home/op', ...fs })).to.throw(
      'No kubeconfig for the home cluster: set GPUCAP_KUBECONFIG, run in a pod with a service account token, set $KUBECONFIG or create ~/.kube/config (or, to run without it, set GPUCAP_HOME_CLUSTER_ENABLED=false and GPUCAP_CAPACITY_CONFIGMAPS_ENABLED=false: remote clusters only, no budgets)',
    );
  });

  it('names the path of a GPUCAP_KUBECONFIG file it cannot read', () => {
    const fs = files({});
    expect(() => homeKubeconfig({ file: '/etc/gpucap/missing', env: {}, ...fs })).to.throw(
      `Cannot read kubeconfig "/etc/gpucap/missing": ENOENT: no such file or directory, open '/etc/gpucap/missing'`,
    );
  });

  it('names the path of a $KUBECONFIG file it cannot read, without falling back to ~/.kube/config', () => {
    const fs = files({ '/home/op/.kube/config': named('user') });
    expect(() => homeKubeconfig({ env: { KUBECONFIG: '/kc/gone' }, home: '/home/op', ...fs })).to.throw(/^Cannot read kubeconfig "\/kc\/gone": ENOENT/);
  });

  it('checks the file it found, naming it in the error', () => {
    const fs = files({ '/home/op/.kube/config': aKubeconfig({ currentContext: '' }) });
    expect(() => homeKubeconfig({ env: {}, home: '/home/op', ...fs })).to.throw('Kubeconfig "/home/op/.kube/config" has no current-context');
  });
});
