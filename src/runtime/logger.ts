// pino JSON logs. Credentials must never reach a log line: whatever path a header or token takes
// into a log object, it is censored here as a last line of defence.
import { pino, type Logger } from 'pino';

export const REDACTED_PATHS = [
  'authorization',
  'token',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  '*.authorization',
  '*.Authorization',
  '*.token',
  '*.apiToken',
  '*.password',
];

export function createLogger(options: { level: string; version: string }, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'gpu-capacity-api', version: options.version },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
