/**
 * Every plan page of a fixtures build through `catalog serve`, as a person following a partner's `webUrl` gets
 * it: the plan's own title and summary, without a key; the not-found page for an id no catalog holds; HEAD with
 * the same headers and no body; 405 for any other method. Also a flat `catalog build --out` directory (no
 * pointer) and a build whose pages live on a website elsewhere.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../builder/model.ts';
import { PAGE_HEADERS, PAGE_SECURITY_HEADERS } from '../../contract/index.ts';
import { fewPlansFile } from '../../testing/aws.ts';
import { useServedWorld } from '../../testing/cases.suite.ts';
import { EMPTY_STORE, httpRequest, runCatalog, startServe } from '../../testing/cli.ts';
import { useScratchDir } from '../../testing/scratch.ts';
import { MISSING_PLAN_ID } from '../cases.ts';

/** The text of an element as a browser shows it: the five escapes the pages use, undone. */
const unescapeHtml = (text: string) =>
  text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
const titleOf = (html: string) => unescapeHtml(/<title>([^<]*)<\/title>/.exec(html)?.[1] ?? '');
const summaryOf = (html: string) => {
  const match = /<p class="summary" dir="auto">([^<]*)<\/p>/.exec(html);
  return match ? unescapeHtml(match[1] ?? '') : null;
};

describe('plan pages through catalog serve', () => {
  const served = useServedWorld();
  const get = (target: string, method = 'GET') => httpRequest(served.server.url, { method, target });

  it("answers every plan's webUrl path with its own page, without a key", async () => {
    const catalog = Catalog.parse(JSON.parse(served.world.objects.all.toString('utf8')));
    expect(catalog.plans.length).toBeGreaterThan(40);
    for (const plan of catalog.plans) {
      const path = new URL(plan.webUrl).pathname;
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers['content-type']).toBe(PAGE_HEADERS.html);
      expect(answer.headers['cache-control']).toBe(PAGE_HEADERS.cacheable);
      for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS))
        expect(answer.headers[name], name).toBe(value);
      const html = answer.body.toString('utf8');
      expect(titleOf(html), path).toBe(plan.title);
      expect(summaryOf(html), path).toBe(plan.summary);
      expect(html).toContain(`<link rel="canonical" href="${plan.webUrl}">`);
    }
  });

  it('answers an id no catalog holds with the not-found page, and HEAD with the same headers and no body', async () => {
    const missing = await get(`/plans/${MISSING_PLAN_ID}`);
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe(PAGE_HEADERS.html);
    expect(missing.body.toString('utf8')).toContain('<title>Plan not found</title>');
    const head = await get(`/plans/${MISSING_PLAN_ID}`, 'HEAD');
    expect(head.status).toBe(404);
    expect(head.body.length).toBe(0);

    const path = new URL(
      Catalog.parse(JSON.parse(served.world.objects.all.toString('utf8'))).plans[0]?.webUrl ?? '',
    ).pathname;
    const [page, pageHead] = [await get(path), await get(path, 'HEAD')];
    expect(pageHead.status).toBe(200);
    expect(pageHead.body.length).toBe(0);
    for (const name of ['content-type', 'cache-control', 'etag', 'last-modified', 'content-security-policy'])
      expect(pageHead.headers[name], name).toBe(page.headers[name]);
  });

  it('refuses any other method with 405 and Allow: GET, HEAD', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const answer = await get(`/plans/${MISSING_PLAN_ID}`, method);
      expect(answer.status, method).toBe(405);
      expect(answer.headers.allow, method).toBe('GET, HEAD');
    }
  });
});

describe('plan pages in other layouts', () => {
  const scratch = useScratchDir();

  /**
   * Publishes a few of the fixtures' rows (with `args`: the layout is what is tested, whatever the plans) into a
   * new local deployment in the scratch directory; its origin.
   */
  async function deployment(...args: string[]): Promise<{ origin: string; store: string }> {
    const [origin, store] = [`${scratch.dir}/origin`, `${scratch.dir}/kvs.json`];
    await writeFile(store, EMPTY_STORE);
    const source = await fewPlansFile();
    const published = await runCatalog([
      'publish',
      ...['--origin', origin, '--store', store, '--source', source],
      ...['--base-url', 'http://127.0.0.1:8790', ...args],
    ]);
    expect(published.code, published.stderr).toBe(0);
    return { origin, store };
  }

  it('are served from a new local deployment, as the gateway README serves a build', async () => {
    const { origin, store } = await deployment();
    const live = (await readdir(`${origin}/builds`))[0];
    const plan = Catalog.parse(JSON.parse(await readFile(`${origin}/builds/${live}/catalog.json`, 'utf8')))
      .plans[0];
    const server = await startServe(['--origin', origin, '--store', store]);
    try {
      const page = await httpRequest(server.url, { method: 'GET', target: `/plans/${plan?.id}` });
      expect(page.status).toBe(200);
      expect(titleOf(page.body.toString('utf8'))).toBe(plan?.title);
      const missing = await httpRequest(server.url, { method: 'GET', target: `/plans/${MISSING_PLAN_ID}` });
      expect(missing.status).toBe(404);
      expect(missing.body.toString('utf8')).toContain('Plan not found');
    } finally {
      await server.stop();
    }
  });

  it('are not built when they live on a website elsewhere: every page path is the not-found page', async () => {
    const { origin, store } = await deployment('--web-base-url', 'https://www.example.com');
    const live = (await readdir(`${origin}/builds`))[0];
    const plan = Catalog.parse(JSON.parse(await readFile(`${origin}/builds/${live}/catalog.json`, 'utf8')))
      .plans[0];
    expect(plan?.webUrl).toBe(`https://www.example.com/plans/${plan?.id}`);
    expect(await readdir(origin)).not.toContain('plans');
    const server = await startServe(['--origin', origin, '--store', store]);
    try {
      const answer = await httpRequest(server.url, { method: 'GET', target: `/plans/${plan?.id}` });
      expect(answer.status).toBe(404);
    } finally {
      await server.stop();
    }
  });
});
