// The file name a download is offered under, from the service's Content-Disposition header. Apart
// from the download itself, which needs the DOM, so that a Node test can read it.

/** The file name of a Content-Disposition header: `filename*=UTF-8''…` first (RFC 6266), else `filename="…"`. */
export function filenameOf(header: string | null): string | undefined {
  if (header === null) return undefined;
  const extended = /filename\*\s*=\s*UTF-8''([^;\s]+)/i.exec(header)?.[1];
  if (extended !== undefined) {
    try {
      return decodeURIComponent(extended);
    } catch {
      // A malformed escape: the plain parameter, if any, says the name as well.
    }
  }
  const quoted = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header)?.[1];
  if (quoted !== undefined) return quoted.replace(/\\(.)/g, '$1');
  return /filename\s*=\s*([^;\s]+)/i.exec(header)?.[1];
}
