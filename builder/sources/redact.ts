/**
 * Keeping secrets out of source names and messages: a URL is named with its password and any secret-looking
 * query value replaced by `***`, and every message a driver produces is scrubbed of the secrets it was given
 * before it reaches an error. A URL is redacted as typed, over-redacting rather than under-redacting, and
 * checked as the runtime reads it (the WHATWG parser: `http:\\user:pw@host` has a password, as
 * `http://user:pw@host` has).
 */

/** Query parameter names whose values are secrets (`password`, `api_key`, `access_token`, `sig`, …). */
const SECRET_PARAMETER = /pass|secret|token|key|auth|sig|credential|session/i;

/** What stands in for a secret. */
export const REDACTED = '***';

/**
 * The schemes the WHATWG URL parser treats as special: after the scheme, any run of `/` and `\` (even none)
 * starts the authority, and `\` ends it as `/` does.
 */
const SPECIAL_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:', 'ftp:', 'file:']);

/** The URL as the runtime (Node's WHATWG parser) reads `spec`, when it is one of a special scheme. */
function specialUrl(spec: string): URL | undefined {
  try {
    const url = new URL(spec);
    return SPECIAL_SCHEMES.has(url.protocol) ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Splits `scheme://authority rest` as typed (slashes or backslashes after the scheme, or none); the userinfo
 * ends at the last `@` before the query.
 */
function splitUrl(spec: string): { scheme: string; userinfo: string | null; rest: string } | null {
  const match = /^(\s*[a-z][a-z0-9+.-]*:[/\\]*)(.*)$/is.exec(spec);
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

/** The values of secret-looking query parameters of `text` replaced by `***`. */
function redactQuery(text: string): string {
  return text.replace(/([?&][^=&#]*=)([^&#]*)/g, (whole, name: string) =>
    SECRET_PARAMETER.test(name) ? `${name}${REDACTED}` : whole,
  );
}

/**
 * The URL with the password of its userinfo and the values of secret-looking query parameters replaced by
 * `***`: `postgres://catalog:s3cret@db:5432/plans` → `postgres://catalog:***@db:5432/plans`, as typed (it works
 * on strings `new URL` refuses too). The result is then read as the runtime reads it: where the WHATWG parser
 * still finds a password, the URL is shown as the parser reads it, password redacted. The one redaction of
 * every URL a message or a name shows (the settings' `redact`, the sources' names).
 */
export function redactUrl(spec: string): string {
  const typed = redactTyped(spec);
  const read = specialUrl(typed);
  if (read === undefined || read.password === '' || read.password === REDACTED) return typed;
  read.password = REDACTED;
  return redactQuery(read.href);
}

/** {@link redactUrl} of the text as typed. */
function redactTyped(spec: string): string {
  const parts = splitUrl(spec);
  if (!parts) return spec;
  let { userinfo, rest } = parts;
  if (userinfo !== null) {
    const colon = userinfo.indexOf(':');
    if (colon !== -1) userinfo = `${userinfo.slice(0, colon)}:${REDACTED}`;
  }
  rest = redactQuery(rest);
  return `${parts.scheme}${userinfo === null ? '' : userinfo}${rest}`;
}

/**
 * The secrets a URL carries: its password (as typed, and as the runtime's parser reads it) and secret-looking
 * query values, raw and percent-decoded.
 */
export function urlSecrets(spec: string): string[] {
  const secrets: string[] = [];
  const password = specialUrl(spec)?.password;
  if (password) secrets.push(password);
  const parts = splitUrl(spec);
  if (!parts) return secrets;
  const colon = parts.userinfo?.indexOf(':') ?? -1;
  if (parts.userinfo && colon !== -1) secrets.push(parts.userinfo.slice(colon + 1));
  for (const match of parts.rest.matchAll(/[?&]([^=&#]*)=([^&#]*)/g)) {
    if (SECRET_PARAMETER.test(match[1] ?? '')) secrets.push(match[2] ?? '');
  }
  return secrets
    .flatMap((secret) => {
      let decoded = secret;
      try {
        decoded = decodeURIComponent(secret.replace(/\+/g, ' '));
      } catch {
        // not percent-encoded after all
      }
      return decoded === secret ? [secret] : [secret, decoded];
    })
    .filter((secret, at, all) => all.indexOf(secret) === at);
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
