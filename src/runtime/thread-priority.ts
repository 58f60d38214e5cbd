// Lowering the scheduling priority of the calling thread. On Linux a thread is a task of its own, and
// setpriority(PRIO_PROCESS, 0) (os.setPriority with no pid) renices the calling thread only, so a
// worker that writes or decodes in the background yields the CPU to the threads that answer requests
// (the main thread, the read workers) whenever the cores are short, and runs at full speed when they
// are not. Raising the niceness needs no privilege; lowering it back would, so a thread is niced once,
// when it starts.
import { setPriority } from 'node:os';

/**
 * Renices the calling thread to `niceness` (0–19). Where the OS refuses (not Linux), the thread keeps
 * its priority: it is a preference for a short CPU, never needed for correctness.
 */
export function niceThisThread(niceness: number): void {
  if (niceness === 0) return;
  try {
    setPriority(niceness);
  } catch {
    // Kept at the process's priority.
  }
}
