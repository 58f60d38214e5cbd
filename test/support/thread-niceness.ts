// The niceness of each thread of this process, from /proc (Linux): a worker started with a niceness
// shows as one more task at that value.
import { readdirSync, readFileSync } from 'node:fs';

/** How many threads of this process run at `niceness`. */
export function threadsAtNiceness(niceness: number): number {
  let count = 0;
  for (const task of readdirSync('/proc/self/task')) {
    try {
      // Fields after the command name's closing parenthesis: state is field 3, nice is field 19.
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === niceness) count += 1;
    } catch {
      // The thread ended while listed.
    }
  }
  return count;
}
