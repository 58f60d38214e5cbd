/** `count` distinct ports free right now on 127.0.0.1, below the kernel's ephemeral range. */
export function freePorts(count: number): Promise<number[]>;
