// Warnings on stderr about where the token may be seen besides the service: on the command line it
// stays in the shell's history and in every user's `ps`; over plain http to another machine it
// crosses the network readable by anyone on the path. The command still runs: a demo on a laptop may
// mean it, but nobody should do it by accident. The token itself is never printed.
import { isIP } from 'node:net';
import { configFilePath } from './credentials.js';

type Env = Readonly<Record<string, string | undefined>>;

export function exposureWarnings(flags: { token?: string; url?: string }, env: Env): string[] {
  const warnings: string[] = [];
  if (flags.token) {
    warnings.push('Warning: --token leaves the token in your shell history and shows it to every user of this machine ' +
      `in the process list (ps); set GPUCAP_TOKEN, or write "token: <token>" in ${configFilePath(env)} (mode 0600), instead`);
  }
  if (flags.url !== undefined) {
    const url = new URL(flags.url);
    if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
      warnings.push(`Warning: --url ${url.origin} is plain http to another machine: the token crosses the network unencrypted; ` +
        'use an https:// URL, or leave out --url to go through a port-forward');
    }
  }
  return warnings.map((line) => `${line}\n`);
}

/** This machine by name or address: `localhost`, 127.0.0.0/8, ::1 (URL keeps IPv6 in brackets). */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return isIP(host) === 6 && host === '::1';
}
