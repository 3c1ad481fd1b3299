import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCatalog } from '../../testing/cli.ts';
import {
  type Answer,
  corsHeaders,
  eventually,
  type LocalEdge,
  send,
  startLocalEdge,
} from '../../testing/keys.ts';

const A = 'https://a.partner.example';
const B = 'http://127.0.0.1:5173';

describe('catalog cors against a running catalog serve', () => {
  let edge: LocalEdge;
  let key: string;
  beforeAll(async () => {
    edge = await startLocalEdge();
    const issued = await runCatalog(['keys', 'issue', '--partner', 'acme', '--store', edge.store]);
    key = issued.stdout.trim();
  });
  afterAll(() => edge?.stop());

  const cors = (...args: string[]) => runCatalog(['cors', ...args, '--store', edge.store]);
  /** A GET with the key, a preflight, and a 401, all as a browser on `origin` would send them. */
  const answers = async (origin: string): Promise<Answer[]> =>
    Promise.all([
      send(edge.url, { key, origin }),
      send(edge.url, { method: 'OPTIONS', origin }),
      send(edge.url, { origin }),
    ]);
  const allowOrigins = async (origin: string) =>
    (await answers(origin)).map((answer) => answer.headers['access-control-allow-origin']);

  it('sends no Access-Control-* header by default, and cors show says CORS is off', async () => {
    for (const answer of await answers(A)) expect(corsHeaders(answer)).toEqual({});
    const shown = await cors('show');
    expect(shown).toMatchObject({ code: 0, stdout: '' });
    expect(shown.stderr).toMatch(/^CORS is off/);
  });

  it('cors set A puts A in Access-Control-Allow-Origin of every answer, and the preflight headers on OPTIONS', async () => {
    const result = await cors('set', A);
    expect(result.code).toBe(0);
    await eventually(
      async () => (await allowOrigins(A)).every((value) => value === A),
      1_000,
      'A is allowed',
    );
    const [get, preflight, unauthorized] = await answers(A);
    expect(get?.status).toBe(200);
    expect(unauthorized?.status).toBe(401);
    expect(corsHeaders(preflight as Answer)).toEqual({
      'access-control-allow-origin': A,
      'access-control-allow-methods': 'GET, OPTIONS',
      'access-control-allow-headers': 'X-Api-Key',
      'access-control-max-age': '600',
    });
    expect((await cors('show')).stdout).toBe(`${A}\n`);
  });

  it('cors set B replaces A: only B is ever sent', async () => {
    expect((await cors('set', B)).code).toBe(0);
    await eventually(
      async () => (await allowOrigins(B)).every((value) => value === B),
      1_000,
      'B is allowed',
    );
    const all = [...(await answers(A)), ...(await answers(B))];
    for (const answer of all) expect(answer.headers['access-control-allow-origin']).toBe(B);
    expect(JSON.parse(await readFile(edge.store, 'utf8')).data).toContainEqual({
      key: 'cors:origin',
      value: B,
    });
    expect(await readFile(edge.store, 'utf8')).not.toContain(A);
  });

  it('cors clear removes every Access-Control-* header', async () => {
    const result = await cors('clear');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`CORS turned off (was ${B})`);
    await eventually(
      async () => (await answers(B)).every((answer) => Object.keys(corsHeaders(answer)).length === 0),
      1_000,
      'no CORS headers',
    );
    expect((await cors('show')).stdout).toBe('');
  });

  it.each([
    ['*', 'must be one exact origin; * (any origin) is never allowed'],
    ['null', 'the null origin (sandboxed pages, files) is never allowed'],
    [`${A}/`, `must not end with a slash: ${A}`],
    [`${A}/app`, `must be scheme://host[:port] with no path, query or fragment: ${A}`],
    ['ftp://a.partner.example', 'must start with https:// or http://'],
  ])('refuses cors set %j with a one-line reason, and changes nothing', async (origin, reason) => {
    const before = await readFile(edge.store, 'utf8');
    const result = await cors('set', origin);
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `catalog: ORIGIN ${JSON.stringify(origin)}: ${reason}\n`,
    });
    expect(await readFile(edge.store, 'utf8')).toBe(before);
  });
});
