// The service version from package.json.
import { packageRoot } from './package-root.js';

export function serviceVersion(): string {
  return packageRoot()?.version ?? '0.0.0-unknown';
}
