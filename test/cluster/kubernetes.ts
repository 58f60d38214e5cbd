// The single-node cluster of scripts/cluster/ for the chart test: up.sh in before(), down.sh in
// after() (keeping the folder's logs when a test failed), and the tools an operator runs against it:
// kubectl and helm, with the cluster-admin kubeconfig up.sh writes.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand, type CommandResult } from '../support/container-tools.js';

const SCRIPTS = fileURLToPath(new URL('../../scripts/cluster/', import.meta.url));

export interface Cluster {
  dir: string;
  kubeconfig: string;
  kubectlPath: string;
  node: string;
  /** kubectl as cluster-admin; resolves with its exit code and output whatever the code. */
  kubectlResult(args: string[]): Promise<CommandResult>;
  /** kubectl as cluster-admin, which must succeed: its stdout. */
  kubectl(args: string[]): Promise<string>;
  /** The end of every component's log, for a failure message. */
  logTails(lines?: number): string;
  down(options: { keepLogs: boolean }): Promise<void>;
}

/** Brings the cluster up in `dir` with `images` imported into its containerd (minutes on a cold machine). */
export async function upCluster(dir: string, images: string[]): Promise<Cluster> {
  const up = await runCommand('bash', [join(SCRIPTS, 'up.sh'), dir, ...images], { timeoutMs: 40 * 60_000 });
  if (up.code !== 0) throw new Error(`scripts/cluster/up.sh failed (${up.code}):\n${up.stderr.split('\n').slice(-40).join('\n')}`);
  process.stdout.write(up.stderr.split('\n').filter((line) => line.startsWith('[up.sh]')).map((line) => `      ${line}\n`).join(''));
  const env = Object.fromEntries(
    readFileSync(join(dir, 'env'), 'utf8')
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  const kubeconfig = env.KUBECONFIG ?? join(dir, 'kubeconfig');
  const kubectlPath = join(env.CLUSTER_KUBERNETES_BIN ?? '', 'kubectl');
  return {
    dir,
    kubeconfig,
    kubectlPath,
    node: env.CLUSTER_NODE ?? '',
    kubectlResult: (args) => runCommand(kubectlPath, ['--kubeconfig', kubeconfig, ...args]),
    async kubectl(args) {
      const result = await runCommand(kubectlPath, ['--kubeconfig', kubeconfig, ...args]);
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr.trim()}`);
      return result.stdout;
    },
    logTails(lines = 20) {
      return ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet', 'containerd', 'kube-proxy']
        .map((name) => {
          try {
            return `--- ${name}.log\n${readFileSync(join(dir, 'logs', `${name}.log`), 'utf8').trimEnd().split('\n').slice(-lines).join('\n')}`;
          } catch {
            return `--- ${name}.log: none`;
          }
        })
        .join('\n');
    },
    async down({ keepLogs }) {
      const result = await runCommand('bash', [join(SCRIPTS, 'down.sh'), dir], {
        timeoutMs: 5 * 60_000,
        env: { ...process.env, GPUCAP_CLUSTER_KEEP: keepLogs ? '1' : '' },
      });
      if (result.code !== 0) throw new Error(`scripts/cluster/down.sh failed (${result.code}): ${result.stderr}`);
    },
  };
}

export interface PortForward {
  /** Local ports, in the order the remote ports were asked for. */
  ports: number[];
  stop(): void;
}

/**
 * `kubectl port-forward TARGET :REMOTE...` as a user runs it: kubectl picks the local ports and prints
 * them ("Forwarding from 127.0.0.1:PORT -> REMOTE"); resolves once every one is listening.
 */
export function portForward(cluster: Cluster, namespace: string, target: string, remotePorts: number[]): Promise<PortForward> {
  const child: ChildProcess = spawn(cluster.kubectlPath, ['--kubeconfig', cluster.kubeconfig, '-n', namespace, 'port-forward', '--address', '127.0.0.1', target, ...remotePorts.map((port) => `:${port}`)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const found = new Map<number, number>();
    let output = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`kubectl port-forward ${target} printed no forwarding lines within 30 s: ${output}`));
    }, 30_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      for (const match of output.matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)/g)) found.set(Number(match[2]), Number(match[1]));
      if (remotePorts.every((port) => found.has(port))) {
        clearTimeout(timer);
        resolve({ ports: remotePorts.map((port) => found.get(port) ?? 0), stop: () => child.kill() });
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`kubectl port-forward ${target} exited ${code}: ${output}`));
    });
  });
}
