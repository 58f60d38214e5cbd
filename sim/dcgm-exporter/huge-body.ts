// The body of the `huge` fault: exposition text that stays well-formed for as long as a client
// keeps reading, exactly `bytes` long, produced lazily so a 1 GiB body never sits in memory.
// Its purpose is the client's size cap, which must stop reading long before the end.

const CHUNK_BYTES = 64 * 1024;

export function* hugeBody(bytes: number): Generator<Buffer> {
  const header = '# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n';
  let remaining = bytes;
  let pending = header.length <= remaining ? header : '';
  remaining -= pending.length;
  let gpu = 0;
  while (remaining > 0) {
    const line = sampleLine(gpu);
    gpu += 1;
    if (line.length <= remaining) {
      pending += line;
      remaining -= line.length;
    } else {
      pending += padding(remaining);
      remaining = 0;
    }
    if (pending.length >= CHUNK_BYTES || remaining === 0) {
      yield Buffer.from(pending, 'latin1');
      pending = '';
    }
  }
  if (pending !== '') yield Buffer.from(pending, 'latin1');
}

function sampleLine(gpu: number): string {
  const uuid = `GPU-${(gpu >>> 0).toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
  const labels = `gpu="${gpu}",UUID="${uuid}",pci_bus_id="00000000:18:00.0",device="nvidia${gpu}",modelName="NVIDIA H100 80GB HBM3"`;
  return `DCGM_FI_DEV_GPU_UTIL{${labels},hostname="sim-huge",DCGM_FI_DRIVER_VERSION="550.127.05"} ${gpu % 101}\n`;
}

/** Fills the last few bytes with a comment line (or a bare newline), which parsers skip. */
function padding(length: number): string {
  return length === 1 ? '\n' : `#${' '.repeat(length - 2)}\n`;
}
