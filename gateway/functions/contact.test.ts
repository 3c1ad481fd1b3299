/**
 * The contact address in the 401: the built viewer-request bundle holds the placeholder once; the local edge
 * (`catalog serve`) fills it as the stack does (infra/stack-options.test.ts shows the stack's), and the judge of
 * the case table, which `catalog check` runs against a deployment, fails a 401 that still holds the placeholder.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONTACT_PLACEHOLDER,
  GENERATED_HEADERS,
  PROBLEM_UNAUTHORIZED,
  problemDocument,
} from '../../contract/index.ts';
import { ROOT } from '../../testing/cli.ts';
import { REQUEST_CASES } from '../cases.ts';
import { type Answer, judgeAnswer } from '../judge.ts';
import { viewerRequestEvent } from '../local/event.ts';
import { loadBuiltFunction } from '../local/load.ts';
import { GATEWAY_DIST } from './bundle.ts';
import { fillContactAddress } from './contact.ts';

const noStore = { refresh: () => undefined, peek: () => undefined };
const ADDRESS = 'https://partners.trainingplans.app/keys';

/** The 401 the viewer-request function answers a request without a key, as a client reads it. */
async function unauthorized(contactAddress: string): Promise<Answer> {
  const fn = await loadBuiltFunction(ROOT, 'viewer-request', { kvs: noStore, contactAddress });
  const answer = (await fn.run(
    viewerRequestEvent(
      { method: 'GET', target: '/api/plans', rawHeaders: [], remoteAddress: '203.0.113.9' },
      'r-1',
    ),
  )) as { statusCode: number; headers: Record<string, { value: string }>; body: string };
  const headers = Object.fromEntries(Object.entries(answer.headers).map(([name, h]) => [name, h.value]));
  return { status: answer.statusCode, headers, body: Buffer.from(answer.body) };
}

const noKeyCase = REQUEST_CASES.find((c) => c.name === 'no key');
const known = { bodies: {}, etag: () => undefined, modified: () => undefined, secrets: [], cors: null };

describe('the contact address in the 401', () => {
  it('is filled into the local edge’s viewer-request, as catalog serve is given it', async () => {
    const answer = await unauthorized(ADDRESS);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body.toString())).toEqual({
      ...PROBLEM_UNAUTHORIZED,
      detail: `Send exactly one valid API key in the X-Api-Key header; keys are issued through ${ADDRESS}.`,
    });
    expect(noKeyCase && judgeAnswer(noKeyCase, answer, known)).toEqual([]);
  });

  it('fails the judge (and so catalog check) when a deployment serves the placeholder itself', () => {
    const raw = Buffer.from(problemDocument(PROBLEM_UNAUTHORIZED));
    expect(raw.toString()).toContain(CONTACT_PLACEHOLDER);
    const answer: Answer = {
      status: 401,
      headers: {
        'content-type': 'application/problem+json',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'www-authenticate': GENERATED_HEADERS.wwwAuthenticate,
      },
      body: raw,
    };
    expect((noKeyCase && judgeAnswer(noKeyCase, answer, known))?.join('\n')).toContain(
      `body: expected the problem document ${problemDocument(PROBLEM_UNAUTHORIZED)} (${CONTACT_PLACEHOLDER} filled in)`,
    );
  });

  it('is filled exactly once, and an address that cannot sit in a JavaScript string is refused', async () => {
    const code = await readFile(join(ROOT, GATEWAY_DIST, 'viewer-request.js'), 'utf8');
    expect(code.split(CONTACT_PLACEHOLDER)).toHaveLength(2);
    expect(() => fillContactAddress(code, 'a"b@example.org')).toThrow(
      'contact address "a\\"b@example.org": cannot be written into the function',
    );
    expect(() => fillContactAddress(`${code}${CONTACT_PLACEHOLDER}`, ADDRESS)).toThrow(
      'the viewer-request bundle holds <CONTACT_ADDRESS> 2 times, not once',
    );
  });
});
