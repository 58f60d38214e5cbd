// Circles of imports among source files, for the architecture test: the groups of files that reach
// each other through their imports (strongly connected components, by Tarjan's algorithm), and for
// each group the shortest circle through its first file, which is what a report can show.

/** A file and the files it imports (only those among the files given count). */
export interface ImportingFile {
  file: string;
  imports: readonly { target: string; line: number }[];
}

/** One step of a circle: `file` imports the next step's file at `line`. */
export interface CircleStep {
  file: string;
  line: number;
}

/** Every group of two or more files that import each other, directly or through others; each sorted by name. */
export function importTangles(files: readonly ImportingFile[]): string[][] {
  const edges = edgesOf(files);
  const index = new Map<string, number>();
  const lowest = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const tangles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    lowest.set(file, index.get(file) ?? 0);
    stack.push(file);
    onStack.add(file);
    for (const next of edges.get(file)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowest.set(file, Math.min(lowest.get(file) ?? 0, lowest.get(next) ?? 0));
      } else if (onStack.has(next)) {
        lowest.set(file, Math.min(lowest.get(file) ?? 0, index.get(next) ?? 0));
      }
    }
    if (lowest.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1) tangles.push(group.sort());
  };
  for (const { file } of files) if (!index.has(file)) visit(file);
  return tangles.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

/**
 * The shortest circle from the first file of `tangle` back to it, inside the tangle (breadth first):
 * the steps in order, the last one importing the first step's file.
 */
export function shortestCircle(files: readonly ImportingFile[], tangle: readonly string[]): CircleStep[] {
  const edges = edgesOf(files);
  const members = new Set(tangle);
  const start = tangle[0];
  if (start === undefined) return [];
  const cameFrom = new Map<string, CircleStep>();
  const queue = [start];
  for (let at = 0; at < queue.length; at++) {
    const file = queue[at] as string;
    for (const [next, line] of edges.get(file) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) return [...stepsTo(file, cameFrom, start), { file, line }];
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, { file, line });
      queue.push(next);
    }
  }
  return [];
}

/** The steps from `start` to `file`, found by walking `cameFrom` back. */
function stepsTo(file: string, cameFrom: ReadonlyMap<string, CircleStep>, start: string): CircleStep[] {
  const steps: CircleStep[] = [];
  for (let at = file; at !== start; ) {
    const step = cameFrom.get(at);
    if (step === undefined) break;
    steps.unshift(step);
    at = step.file;
  }
  return steps;
}

/** Each file's imports of the files given, by target, with the line of its first import of each. */
function edgesOf(files: readonly ImportingFile[]): Map<string, Map<string, number>> {
  const known = new Set(files.map((each) => each.file));
  const edges = new Map<string, Map<string, number>>();
  for (const { file, imports } of files) {
    const targets = new Map<string, number>();
    for (const { target, line } of imports) {
      if (known.has(target) && target !== file && !targets.has(target)) targets.set(target, line);
    }
    edges.set(file, targets);
  }
  return edges;
}
