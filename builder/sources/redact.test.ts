import { describe, expect, it } from 'vitest';
import { redactUrl, scrub, urlSecrets } from './redact.ts';

describe('redacting a source URL', () => {
  it.each([
    ['postgres://catalog:s3cret@db.internal:5432/plans', 'postgres://catalog:***@db.internal:5432/plans'],
    [
      'postgresql://catalog:p%40ss@127.0.0.1/plans?sslmode=require',
      'postgresql://catalog:***@127.0.0.1/plans?sslmode=require',
    ],
    ['postgres://catalog:pa/ss@word@db/plans', 'postgres://catalog:***@db/plans'],
    ['postgres://u:p@/plans?host=/var/run/postgresql', 'postgres://u:***@/plans?host=/var/run/postgresql'],
    [
      'postgres://catalog@db/plans?password=s3cret&sslmode=verify-full',
      'postgres://catalog@db/plans?password=***&sslmode=verify-full',
    ],
    [
      'https://api.example/plans?api_key=k&page=2&sig=abc',
      'https://api.example/plans?api_key=***&page=2&sig=***',
    ],
    ['https://api.example/users/@me/plans', 'https://api.example/users/@me/plans'],
    ['postgres://db.internal/plans', 'postgres://db.internal/plans'],
    ['fixtures/plans.json', 'fixtures/plans.json'],
    // The runtime's parser reads these as http://user:pw@host/ too: a backslash is a slash, and the slashes
    // after a special scheme are optional.
    ['http:\\\\user:pw@127.0.0.1:1/', 'http:\\\\user:***@127.0.0.1:1/'],
    ['https:\\/user:pw@h.example', 'https:\\/user:***@h.example'],
    ['http:user:pw@h.example', 'http:user:***@h.example'],
    [' http://user:pw@h.example/?token=t', ' http://user:***@h.example/?token=***'],
    // A tab or newline inside the scheme is dropped by the parser, so the text as typed shows no userinfo.
    ['ht\ttp://user:pw@h.example/', 'http://user:***@h.example/'],
    // Refused by the parser (a port out of range): redacted as typed.
    ['http:\\\\user:pw@h.example:99999', 'http:\\\\user:***@h.example:99999'],
  ])('%s → %s', (url, redacted) => {
    expect(redactUrl(url)).toBe(redacted);
  });

  it('leaves no password the runtime would read', () => {
    for (const slashes of ['//', '\\\\', '/\\', '\\/', '', '///'])
      for (const scheme of ['http:', 'HTTPS:', 'ws:'])
        for (const password of ['pw', 'p%40ss', 'p:w', 'sec ret'].map((p) => `${p}XYZ`)) {
          const spec = `${scheme}${slashes}user:${password}@host.example:8080/x?a=1`;
          const read = new URL(spec).password;
          expect(read).not.toBe('');
          expect(redactUrl(spec)).not.toContain(read);
          expect(redactUrl(spec)).not.toContain('XYZ');
        }
  });
});

describe('the secrets of a URL', () => {
  it('are the password and secret query values, raw and decoded', () => {
    expect(urlSecrets('postgres://catalog:p%40ss@db/plans?password=x%2By&sslmode=require')).toEqual([
      'p%40ss',
      'p@ss',
      'x%2By',
      'x+y',
    ]);
    expect(urlSecrets('https://api.example/plans')).toEqual([]);
    expect(urlSecrets('http:\\\\user:p%40ss@h.example/')).toEqual(['p%40ss', 'p@ss']);
  });

  it('are scrubbed from text, but not when too short to be told from ordinary words', () => {
    expect(scrub('login as catalog with hunter2 failed (hunter2)', ['hunter2'])).toBe(
      'login as catalog with *** failed (***)',
    );
    expect(scrub('a password of abc', ['abc'])).toBe('a password of abc');
  });
});
