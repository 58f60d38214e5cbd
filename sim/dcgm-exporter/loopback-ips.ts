// Hands out loopback addresses for simulated exporters: 127.0.1.1, 127.0.1.2, …, 127.0.1.254,
// 127.0.2.1, … Linux routes all of 127/8 to lo, so each exporter can own an address and every
// exporter can listen on the same port, as real exporters do on their pod IPs. Last octets 0 and
// 255 are skipped so no address looks like a network or broadcast address.
import { isIPv4 } from 'node:net';

export class LoopbackIps {
  private current: number;
  private started = false;

  /** `base` is the first address handed out (moved forward if its last octet is 0 or 255). */
  constructor(base = '127.0.1.1') {
    if (!isIPv4(base) || !base.startsWith('127.')) {
      throw Object.assign(new Error(`Cannot allocate simulated exporter addresses: "${base}" is not an IPv4 loopback address (127.x.y.z)`), {
        code: 'SIM_BAD_IP_BASE',
      });
    }
    this.current = toNumber(base);
  }

  /** The next unused address. */
  next(): string {
    if (this.started) this.current += 1;
    this.started = true;
    while ((this.current & 0xff) === 0 || (this.current & 0xff) === 0xff) this.current += 1;
    if (this.current >>> 24 !== 127) {
      throw Object.assign(new Error('Cannot allocate a simulated exporter address: the loopback range 127/8 is exhausted'), {
        code: 'SIM_IPS_EXHAUSTED',
      });
    }
    return toAddress(this.current);
  }
}

function toNumber(ip: string): number {
  return ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function toAddress(n: number): string {
  return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
}
