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
  ])('%s → %s', (url, redacted) => {
    expect(redactUrl(url)).toBe(redacted);
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
  });

  it('are scrubbed from text, but not when too short to be told from ordinary words', () => {
    expect(scrub('login as catalog with hunter2 failed (hunter2)', ['hunter2'])).toBe(
      'login as catalog with *** failed (***)',
    );
    expect(scrub('a password of abc', ['abc'])).toBe('a password of abc');
  });
});
