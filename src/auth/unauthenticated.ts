// The 401 errors of the auth layer, with the RFC 6750 WWW-Authenticate challenge they need.
import { ApiError } from '../domain/errors.js';

const REALM = 'gpu-capacity-api';

/** No credential at all: the challenge carries no error code (RFC 6750 section 3.1). */
export function missingCredentials(): ApiError {
  return new ApiError('UNAUTHENTICATED', 'Authorization header is missing', {
    headers: { 'WWW-Authenticate': `Bearer realm="${REALM}"` },
  });
}

/** A credential was sent but is not acceptable. The message reaches the client: never put the token in it. */
export function invalidToken(message: string): ApiError {
  // error_description may not contain `"` or `\` (RFC 6750 section 3), so quotes become apostrophes.
  const description = message.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
  return new ApiError('UNAUTHENTICATED', message, {
    headers: { 'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token", error_description="${description}"` },
  });
}
