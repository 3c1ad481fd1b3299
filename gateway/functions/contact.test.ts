/**
 * The contact address in the 401 and on the home page: the built viewer-request bundle holds the placeholder; the
 * local edge (`catalog serve`) fills it as the stack does (infra/stack-options.test.ts shows the stack's), and the
 * judge of the case table, which `catalog check` runs against a deployment, fails a 401 or a home page that still
 * holds the placeholder.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ANSWER_HEADERS,
  CONTACT_PLACEHOLDER,
  GENERATED_HEADERS,
  homePage,
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

/** What the viewer-request function answers `target` without a key, as a client reads it. */
async function answerOf(contactAddress: string, target = '/api/plans'): Promise<Answer> {
  const fn = await loadBuiltFunction(ROOT, 'viewer-request', { kvs: noStore, contactAddress });
  const answer = (await fn.run(
    viewerRequestEvent({ method: 'GET', target, rawHeaders: [], remoteAddress: '203.0.113.9' }, 'r-1'),
  )) as { statusCode: number; headers: Record<string, { value: string }>; body: string };
  const headers = Object.fromEntries(Object.entries(answer.headers).map(([name, h]) => [name, h.value]));
  return { status: answer.statusCode, headers, body: Buffer.from(answer.body) };
}
const unauthorized = (contactAddress: string) => answerOf(contactAddress);

const noKeyCase = REQUEST_CASES.find((c) => c.name === 'no key');
const homeCase = REQUEST_CASES.find((c) => c.name === 'the home page');
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

  it('is filled in every place the bundle holds it; a bundle with none, or an address that cannot sit in a JavaScript string or HTML, is refused', async () => {
    const code = await readFile(join(ROOT, GATEWAY_DIST, 'viewer-request.js'), 'utf8');
    expect(code).toContain(CONTACT_PLACEHOLDER);
    const filled = fillContactAddress(code, ADDRESS);
    expect(filled).not.toContain(CONTACT_PLACEHOLDER);
    expect(filled.split(ADDRESS).length).toBe(code.split(CONTACT_PLACEHOLDER).length);
    expect(() => fillContactAddress(code, 'a"b@example.org')).toThrow(
      'contact address "a\\"b@example.org": cannot be written into the function',
    );
    expect(() => fillContactAddress(code, 'keys<b>@example.org')).toThrow(
      'cannot be written into the function',
    );
    expect(() => fillContactAddress(filled, ADDRESS)).toThrow(
      'the viewer-request bundle holds no <CONTACT_ADDRESS> to fill: rebuild it (npm run build)',
    );
  });
});

describe('the contact address on the home page', () => {
  it.each([
    ['an https:// URL, linked as it is', ADDRESS, ADDRESS],
    [
      'an e-mail address, linked with mailto:',
      'keys+partners@trainingplans.app',
      'mailto:keys+partners@trainingplans.app',
    ],
    [
      'an address with &, escaped',
      'https://trainingplans.app/keys?a=1&b=2',
      'https://trainingplans.app/keys?a=1&amp;b=2',
    ],
  ])('is shown and linked: %s', async (_label, address, link) => {
    const answer = await answerOf(address, '/');
    expect(answer.status).toBe(200);
    const page = answer.body.toString();
    expect(page).toBe(homePage(address));
    expect(page).toContain(`<a class="open" href="${link}"`);
    expect(page).toContain(`by the operator of this service, at ${link.replace('mailto:', '')}.`);
    expect(homeCase && judgeAnswer(homeCase, answer, known)).toEqual([]);
  });

  it('fails the judge (and so catalog check) when a deployment serves the placeholder, or another page', () => {
    const headers = { ...ANSWER_HEADERS.home };
    const served = (page: string): Answer => ({ status: 200, headers, body: Buffer.from(page) });
    expect(homeCase && judgeAnswer(homeCase, served(homePage(CONTACT_PLACEHOLDER)), known)).toEqual([
      `body: is not the home page with a contact address (it holds ${CONTACT_PLACEHOLDER})`,
    ]);
    const other = homePage(ADDRESS).replace('<h1>', '<h1>Not ');
    expect((homeCase && judgeAnswer(homeCase, served(other), known))?.join('\n')).toMatch(
      /^body: is not the home page with a contact address \(\d+ bytes against \d+, first difference at byte/,
    );
  });
});
