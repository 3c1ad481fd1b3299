/**
 * Plan pages end to end in a browser: a source with hostile titles and summaries is published with
 * `catalog publish` into a local origin and store, `catalog serve` answers through the built function bundles,
 * and Debian's Chromium (playwright-core) opens the pages from it. The hostile text shows as text, no script
 * runs, the edge's Content-Security-Policy blocks nothing of the page's own markup, and axe-core finds no
 * violation on a plan page or the not-found page. Runs in `npm run test:system`.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_CSP } from '../../contract/index.ts';
import { launchChromium } from '../../testing/chromium.ts';
import {
  localTargetEnv,
  ROOT,
  runCatalog,
  type ServeProcess,
  scratchDir,
  startServe,
} from '../../testing/cli.ts';
import { HOSTILE_TEXT, hostileRows } from '../../testing/pages.ts';
import { MISSING_PLAN_ID, PAGE_PLAN_ID } from '../cases.ts';

interface PageGlobals {
  readonly document: {
    readonly title: string;
    querySelector(selector: string): { readonly textContent: string | null } | null;
    querySelectorAll(selector: string): { readonly length: number };
    addEventListener(
      type: 'securitypolicyviolation',
      listener: (event: { violatedDirective: string }) => void,
    ): void;
  };
  __violations?: string[];
}

describe('plan pages from the local edge in Chromium', () => {
  let scratch: { dir: string; remove: () => Promise<void> };
  let server: ServeProcess;
  let context: BrowserContext;

  beforeAll(async () => {
    scratch = await scratchDir('catalog-pages-edge-');
    const rows = JSON.parse(await readFile(join(ROOT, 'fixtures', 'plans.json'), 'utf8')) as unknown[];
    const source = join(scratch.dir, 'source.json');
    await writeFile(source, JSON.stringify([...rows, ...hostileRows()]));
    const env = localTargetEnv(scratch.dir, { CATALOG_SOURCE: source });
    const published = await runCatalog(['publish'], { env });
    expect(published.code, published.stderr).toBe(0);
    server = await startServe([
      '--origin',
      join(scratch.dir, 'origin'),
      '--store',
      join(scratch.dir, 'kvs.json'),
    ]);
    context = await launchChromium(join(scratch.dir, 'profile'));
    // Nothing leaves the machine: every request but the edge's is refused.
    await context.route(
      (url) => !url.href.startsWith(server.url),
      (route) => route.abort('blockedbyclient'),
    );
    await context.addInitScript(() => {
      const page = globalThis as unknown as PageGlobals;
      page.document.addEventListener('securitypolicyviolation', (event) => {
        page.__violations = [...(page.__violations ?? []), event.violatedDirective];
      });
    });
  });
  afterAll(async () => {
    await context?.close();
    await server?.stop();
    await scratch?.remove();
  });

  async function open(path: string) {
    const page: Page = await context.newPage();
    const dialogs: string[] = [];
    const errors: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      // A refused cover image is the route above, not the page: anything else is an error of the page.
      if (message.type() === 'error' && !message.text().includes('ERR_BLOCKED_BY_CLIENT'))
        errors.push(message.text());
    });
    const response = await page.goto(server.url + path, { waitUntil: 'load' });
    const seen = await page.evaluate(
      () =>
        new Promise<{ violations: string[]; heading: string | null; scripts: number }>((resolve) =>
          setTimeout(() => {
            const g = globalThis as unknown as PageGlobals;
            resolve({
              violations: g.__violations ?? [],
              heading: g.document.querySelector('h1')?.textContent ?? null,
              scripts: g.document.querySelectorAll('script, iframe, object, embed, base').length,
            });
          }, 0),
        ),
    );
    return { page, status: response?.status(), headers: response?.headers() ?? {}, dialogs, errors, ...seen };
  }

  it.each(HOSTILE_TEXT.map((text) => [text.id, text] as const))(
    'shows hostile text %s as text, runs no script, and blocks nothing of its own',
    async (_, text) => {
      const visit = await open(`/plans/${text.id}`);
      expect(visit.status).toBe(200);
      expect(visit.headers['content-security-policy']).toBe(PAGE_CSP);
      expect(visit.heading).toBe(text.title);
      expect(visit.scripts).toBe(0);
      expect(visit.dialogs).toEqual([]);
      expect(visit.errors).toEqual([]);
      expect(visit.violations).toEqual([]);
      await visit.page.close();
    },
  );

  it('has no accessibility violation on a plan page, the not-found page or the home page', async () => {
    for (const [path, status] of [
      [`/plans/${PAGE_PLAN_ID}`, 200],
      [`/plans/${MISSING_PLAN_ID}`, 404],
      ['/', 200],
    ] as const) {
      const visit = await open(path);
      expect(visit.status, path).toBe(status);
      // Chromium logs the document's own 404 status as a console error; nothing else may be logged.
      expect(
        visit.errors.filter((e) => !(status === 404 && e.includes('status of 404'))),
        path,
      ).toEqual([]);
      expect(visit.violations, path).toEqual([]);
      const results = await new AxeBuilder({ page: visit.page }).analyze();
      expect(
        results.violations.map((v) => `${v.id}: ${v.nodes.length}`),
        path,
      ).toEqual([]);
      await visit.page.close();
    }
  });
});
