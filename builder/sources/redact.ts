/**
 * Keeping secrets out of source names and messages: a source is named by its URL with the password and any
 * secret-looking query value replaced by `***`, and every message a driver produces is scrubbed of the secrets
 * it was given before it reaches an error.
 */

/** Query parameter names whose values are secrets (`password`, `api_key`, `access_token`, `sig`, …). */
const SECRET_PARAMETER = /pass|secret|token|key|auth|sig|credential|session/i;

/** What stands in for a secret. */
export const REDACTED = '***';

/** Splits `scheme://authority rest`; the authority ends at the last `@` before the query, or at `/?#`. */
function splitUrl(spec: string): { scheme: string; userinfo: string | null; rest: string } | null {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)(.*)$/is.exec(spec);
  if (!match) return null;
  const scheme = match[1] ?? '';
  const after = match[2] ?? '';
  const end = after.search(/[?#]/);
  const beforeQuery = end === -1 ? after : after.slice(0, end);
  // A password may hold an unencoded `/` or `@`: take the last `@` before the query as the end of userinfo.
  const at = beforeQuery.lastIndexOf('@');
  if (at === -1) return { scheme, userinfo: null, rest: after };
  return { scheme, userinfo: after.slice(0, at), rest: after.slice(at) };
}

/**
 * The URL as typed, with the password of its userinfo and the values of secret-looking query parameters
 * replaced by `***`: `postgres://catalog:s3cret@db:5432/plans` → `postgres://catalog:***@db:5432/plans`.
 * Works on strings that `new URL` refuses too; over-redacts rather than under-redacts.
 */
export function redactUrl(spec: string): string {
  const parts = splitUrl(spec);
  if (!parts) return spec;
  let { userinfo, rest } = parts;
  if (userinfo !== null) {
    const colon = userinfo.indexOf(':');
    if (colon !== -1) userinfo = `${userinfo.slice(0, colon)}:${REDACTED}`;
  }
  rest = rest.replace(/([?&][^=&#]*=)([^&#]*)/g, (whole, name: string) =>
    SECRET_PARAMETER.test(name) ? `${name}${REDACTED}` : whole,
  );
  return `${parts.scheme}${userinfo === null ? '' : userinfo}${rest}`;
}

/** The secrets a URL carries: its password and secret-looking query values, raw and percent-decoded. */
export function urlSecrets(spec: string): string[] {
  const secrets: string[] = [];
  const parts = splitUrl(spec);
  if (!parts) return secrets;
  const colon = parts.userinfo?.indexOf(':') ?? -1;
  if (parts.userinfo && colon !== -1) secrets.push(parts.userinfo.slice(colon + 1));
  for (const match of parts.rest.matchAll(/[?&]([^=&#]*)=([^&#]*)/g)) {
    if (SECRET_PARAMETER.test(match[1] ?? '')) secrets.push(match[2] ?? '');
  }
  return secrets.flatMap((secret) => {
    let decoded = secret;
    try {
      decoded = decodeURIComponent(secret.replace(/\+/g, ' '));
    } catch {
      // not percent-encoded after all
    }
    return decoded === secret ? [secret] : [secret, decoded];
  });
}

/** Secrets shorter than this are not scrubbed from text: they would mangle ordinary words. */
const MIN_SCRUBBED_LENGTH = 4;

/** `text` with every occurrence of each secret replaced by `***` (longest first). */
export function scrub(text: string, secrets: readonly string[]): string {
  let result = text;
  const sorted = secrets.filter((s) => s.length >= MIN_SCRUBBED_LENGTH).sort((a, b) => b.length - a.length);
  for (const secret of sorted) result = result.split(secret).join(REDACTED);
  return result;
}
