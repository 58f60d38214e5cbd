// How much of the rings' memory is resident. The rings live in slabs reserved as a tick starts
// (src/telemetry/rings/ring-slabs.ts): one ArrayBuffer for the whole fleet, which glibc serves as a fresh
// anonymous mapping whose pages cost no RSS until written. A few ticks after the start the rings are
// far from a day of history, so the RSS then could leave part of the rings out; this reads the slab's
// mapping in /proc/<pid>/smaps to tell how much of it the ticks have touched.

export interface SlabResidency {
  mappingBytes: number;
  residentBytes: number;
}

/**
 * The anonymous mapping that holds the slab of `reservedBytes`: the smallest one at least that big and
 * at most 1 MiB bigger (allocator headers). Null when none matches, e.g. when the kernel merged it with
 * a neighbour or the rings were carved from more than one slab.
 */
export function slabResidency(smaps: string, reservedBytes: number): SlabResidency | null {
  if (reservedBytes <= 0) return null;
  let best: SlabResidency | null = null;
  let current: { anonymous: boolean; size: number; rss: number } | null = null;
  const consider = () => {
    if (current === null || !current.anonymous) return;
    if (current.size < reservedBytes || current.size > reservedBytes + 1024 ** 2) return;
    if (best === null || current.size < best.mappingBytes) best = { mappingBytes: current.size, residentBytes: current.rss };
  };
  for (const line of smaps.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (header !== null) {
      consider();
      current = { anonymous: header[1] === '0' && (header[2] ?? '') === '', size: 0, rss: 0 };
      continue;
    }
    const field = /^(Size|Rss):\s+(\d+) kB/.exec(line);
    if (field !== null && current !== null) current[field[1] === 'Size' ? 'size' : 'rss'] = Number(field[2]) * 1024;
  }
  consider();
  return best;
}
