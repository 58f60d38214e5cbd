// What the plugin exits with: 1 for a client error (a bad flag, a refused request, a 4xx), 2 for a
// server or connection error (a 5xx, an unreachable service, no pod to forward to).
export type ExitCode = 1 | 2;

export class CliError extends Error {
  readonly exitCode: ExitCode;

  constructor(message: string, exitCode: ExitCode) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string): CliError => new CliError(message, 1);
