import { freePorts } from '../../scripts/free-ports.mjs';

export { freePorts };

/** A port free right now on 127.0.0.1, below the ephemeral range (see scripts/free-ports.mjs). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error('no free port on 127.0.0.1');
  return port;
}
