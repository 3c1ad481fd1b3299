/**
 * The plan pages and the home page as a person's browser sees them: Debian's Chromium (driven by
 * playwright-core) loads pages from a small HTTP server on 127.0.0.1 that sends them with the page answer's
 * headers (contract/index.ts), the home page exactly as the built viewer-request function answers `/`.
 * Hostile titles and summaries show as text and no script runs, with and without the
 * Content-Security-Policy; the policy blocks nothing of our own markup; axe-core finds no accessibility
 * violation in light and dark mode; screenshots at 375 and 1280 px go to test-output/plan-pages/ for a person
 * to look at. Cover images are answered inside the browser (no request leaves the machine). Runs in
 * `npm run test:system`.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANSWER_HEADERS,
  DISCIPLINES,
  OPENAPI_HEADERS,
  PAGE_HEADERS,
  PAGE_SECURITY_HEADERS,
  PATHS,
} from '../contract/index.ts';
import { viewerRequestEvent } from '../gateway/local/event.ts';
import { loadBuiltFunction } from '../gateway/local/load.ts';
import { launchChromium } from '../testing/chromium.ts';
import { ROOT, scratchDir } from '../testing/cli.ts';
import { HOSTILE_TEXT, hostileRows, planFrom, plansFrom, typicalPlan } from '../testing/pages.ts';
import type { Plan } from './model.ts';
import { renderNotFoundPage, renderPlanPage } from './pages.ts';

/**
 * The few browser globals the page callbacks use (the project compiles without the DOM library). Callbacks
 * run in the page, so each reads them from its own `globalThis`.
 */
interface PageElement {
  readonly tagName: string;
  readonly textContent: string | null;
  readonly innerText: string;
  readonly attributes: Iterable<{ readonly name: string }>;
  getAttribute(name: string): string | null;
}
interface PageGlobals {
  readonly document: {
    readonly title: string;
    readonly body: PageElement;
    readonly documentElement: { readonly scrollWidth: number };
    querySelector(selector: string): PageElement | null;
    querySelectorAll(selector: string): Iterable<PageElement> & { readonly length: number };
    addEventListener(
      type: 'securitypolicyviolation',
      listener: (event: { readonly violatedDirective: string; readonly blockedURI: string }) => void,
    ): void;
  };
  getComputedStyle(element: PageElement | null): {
    readonly margin: string;
    readonly textDecorationLine: string;
  };
  __violations?: string[];
}

/** The contact address the home page is served with, as a deployment's (an e-mail address). */
const CONTACT = 'api-keys@trainingplans.app';

/** Where the screenshots go (ignored by git). */
const SHOTS = join(ROOT, 'test-output', 'plan-pages');
const WIDTHS = [375, 1280] as const;

/**
 * Cover hosts that cannot be reached: one that does not resolve (as the fixtures' invented host did), answered
 * so by the browser itself, and one that refuses the connection (nothing listens on port 1 here).
 */
const UNRESOLVED_COVER_HOST = 'images.unresolved.test';
const REFUSED_COVER_ORIGIN = 'https://127.0.0.1:1';

/** A stand-in cover, answered by the browser itself for any other https: image. */
const COVER_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 160 90"><defs><linearGradient id="g" x2="1" y2="1"><stop offset="0" stop-color="#e8743b"/><stop offset="1" stop-color="#7b2d8b"/></linearGradient></defs><rect width="160" height="90" fill="url(#g)"/><circle cx="120" cy="30" r="14" fill="#ffd66b"/><path d="M0 90 50 45l30 25 25-20 55 40z" fill="#2c1b4d" fill-opacity=".6"/></svg>';

const SECURE: OutgoingHttpHeaders = { ...PAGE_SECURITY_HEADERS };
const WITHOUT_CSP: OutgoingHttpHeaders = { ...PAGE_SECURITY_HEADERS, 'content-security-policy': undefined };

interface Served {
  readonly status: number;
  readonly body: string;
  readonly headers: OutgoingHttpHeaders;
}

/** Serves `routes` (path → answer) on 127.0.0.1; anything else is a bare 404. */
async function pageServer(routes: ReadonlyMap<string, Served>): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    const served = routes.get(req.url ?? '');
    if (!served) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such test page');
      return;
    }
    const headers: OutgoingHttpHeaders = { 'content-type': PAGE_HEADERS.html };
    for (const [name, value] of Object.entries(served.headers))
      if (value !== undefined) headers[name] = value;
    if (served.status === 200 && headers['cache-control'] === undefined)
      headers['cache-control'] = PAGE_HEADERS.cacheable;
    res.writeHead(served.status, headers).end(served.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** What happened while a page loaded. */
interface Visit {
  readonly page: Page;
  readonly status: number | undefined;
  readonly bodyBytes: number;
  readonly headers: Record<string, string>;
  readonly dialogs: string[];
  readonly pageErrors: string[];
  readonly consoleErrors: string[];
  readonly violations: string[];
  /** Every request the page made except its own document, as `METHOD url`. */
  readonly requests: string[];
}

describe('plan pages in Chromium', () => {
  const typical = typicalPlan();
  const fallbackRunning = planFrom({ cover_url: null, summary: null, level: null, days_per_week: null });
  const fallbackStrength = planFrom({
    id: '7a2b3c4d-0000-4000-8000-000000000001',
    title: 'Strong Start',
    cover_url: null,
    discipline: 'strength',
    est_minutes_per_session: null,
  });
  /** The strength fallback plan with a cover: one that loads, and two whose host cannot be reached. */
  const withCover = (id: string, cover: string) =>
    planFrom({
      id,
      title: 'Strong Start',
      cover_url: cover,
      discipline: 'strength',
      est_minutes_per_session: null,
    });
  const loadedCover = withCover(
    '7a2b3c4d-0000-4000-8000-000000000003',
    'https://covers.test/strong-start.svg',
  );
  const unresolvedCover = withCover(
    '7a2b3c4d-0000-4000-8000-000000000004',
    `https://${UNRESOLVED_COVER_HOST}/covers/strong-start.jpg`,
  );
  const refusedCover = withCover(
    '7a2b3c4d-0000-4000-8000-000000000005',
    `${REFUSED_COVER_ORIGIN}/covers/strong-start.jpg`,
  );
  const longTitle = planFrom({
    id: '7a2b3c4d-0000-4000-8000-000000000002',
    title: `Ultra${'marathon'.repeat(12)} with a title longer than any phone is wide`,
  });
  const hostile = plansFrom(hostileRows());
  const canary =
    '<!doctype html><html lang="en"><title>canary</title><p style="color:red">canary</p><script>alert("canary")</script>';

  const routes = new Map<string, Served>();
  const pagePath = (plan: Plan) => `/plans/${plan.id}`;
  for (const plan of [
    typical,
    fallbackRunning,
    fallbackStrength,
    loadedCover,
    unresolvedCover,
    refusedCover,
    longTitle,
    ...hostile,
  ])
    routes.set(pagePath(plan), { status: 200, body: renderPlanPage(plan), headers: SECURE });
  for (const plan of hostile)
    routes.set(`/bare${pagePath(plan)}`, { status: 200, body: renderPlanPage(plan), headers: WITHOUT_CSP });
  const notFound = '/plans/00000000-0000-4000-8000-00000000dead';
  routes.set(notFound, {
    status: 404,
    body: renderNotFoundPage({ appScheme: 'trainingplans' }),
    headers: SECURE,
  });
  routes.set(PATHS.openapi, {
    status: 200,
    body: 'openapi: 3.1.0\n',
    headers: { ...OPENAPI_HEADERS },
  });
  routes.set('/canary/secure', { status: 200, body: canary, headers: SECURE });
  routes.set('/canary/bare', { status: 200, body: canary, headers: WITHOUT_CSP });

  let origin: string;
  let server: Server;
  let context: BrowserContext;
  let profile: { dir: string; remove: () => Promise<void> };

  beforeAll(async () => {
    // The home page as the edge answers `/`: the built viewer-request function, the contact address filled in.
    const viewerRequest = await loadBuiltFunction(ROOT, 'viewer-request', {
      kvs: { refresh: () => undefined, peek: () => undefined },
      contactAddress: CONTACT,
    });
    const home = (await viewerRequest.run(
      viewerRequestEvent({ method: 'GET', target: '/', rawHeaders: [], remoteAddress: '127.0.0.1' }, 'home'),
    )) as { statusCode: number; headers: Record<string, { value: string }>; body: string };
    const homeHeaders = Object.fromEntries(Object.entries(home.headers).map(([name, h]) => [name, h.value]));
    routes.set(PATHS.home, { status: home.statusCode, body: home.body, headers: homeHeaders });
    ({ origin, server } = await pageServer(routes));
    await mkdir(SHOTS, { recursive: true });
    profile = await scratchDir('catalog-pages-chromium-');
    context = await launchChromium(profile.dir);
    // Nothing leaves the machine: https: images are answered here (the unresolved host as a name that does not
    // resolve), the refused one really tried on 127.0.0.1, anything else not local refused.
    await context.route(
      (url) => url.origin !== origin && url.origin !== REFUSED_COVER_ORIGIN,
      (route) => {
        const url = new URL(route.request().url());
        if (url.hostname === UNRESOLVED_COVER_HOST) return route.abort('namenotresolved');
        return url.protocol === 'https:' && route.request().resourceType() === 'image'
          ? route.fulfill({ status: 200, contentType: 'image/svg+xml', body: COVER_SVG })
          : route.abort('blockedbyclient');
      },
    );
    // Reports what the Content-Security-Policy blocked. Injected by the test driver, which the policy does not
    // govern; the page's own markup has no script.
    await context.addInitScript(() => {
      const page = globalThis as unknown as PageGlobals;
      page.document.addEventListener('securitypolicyviolation', (event) => {
        page.__violations = [...(page.__violations ?? []), `${event.violatedDirective} ${event.blockedURI}`];
      });
    });
  });
  afterAll(async () => {
    await context?.close();
    server?.close();
    await profile?.remove();
  });

  async function visit(path: string, options: { width?: number; dark?: boolean } = {}): Promise<Visit> {
    const page = await context.newPage();
    await page.setViewportSize({ width: options.width ?? 375, height: 800 });
    await page.emulateMedia({ colorScheme: options.dark ? 'dark' : 'light' });
    const dialogs: string[] = [];
    const pageErrors: string[] = [];
    const consoleErrors: string[] = [];
    const requests: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('request', (request) => {
      if (request.url() !== origin + path) requests.push(`${request.method()} ${request.url()}`);
    });
    const response = await page.goto(origin + path, { waitUntil: 'load' });
    // Violation events are queued as tasks: let the page run the ones already queued.
    const violations = await page.evaluate(
      () =>
        new Promise<string[]>((resolve) =>
          setTimeout(() => resolve((globalThis as unknown as PageGlobals).__violations ?? []), 0),
        ),
    );
    return {
      page,
      status: response?.status(),
      bodyBytes: (await response?.body())?.length ?? 0,
      headers: response?.headers() ?? {},
      dialogs,
      pageErrors,
      consoleErrors,
      violations,
      requests,
    };
  }

  /** Text the page shows, and traces any script or handler in the document would leave. */
  const inspect = (page: Page) =>
    page.evaluate(() => {
      const { document } = globalThis as unknown as PageGlobals;
      return {
        title: document.title,
        heading: document.querySelector('h1')?.textContent ?? null,
        summary: document.querySelector('.summary')?.textContent ?? null,
        scripts: document.querySelectorAll('script, iframe, object, embed, base').length,
        handlers: [...document.querySelectorAll('*')].flatMap((element) =>
          [...element.attributes]
            .filter((attribute) => attribute.name.startsWith('on'))
            .map((attribute) => `${element.tagName} ${attribute.name}`),
        ),
        links: [...document.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')),
        images: [...document.querySelectorAll('img')].map((img) => img.getAttribute('src')),
      };
    });

  it('notices a script and a blocked inline style when they are there (the detectors below can fail)', async () => {
    const secure = await visit('/canary/secure');
    expect(secure.dialogs).toEqual([]);
    expect(secure.violations).toEqual(expect.arrayContaining([expect.stringMatching(/^script-src/)]));
    expect(secure.violations).toEqual(expect.arrayContaining([expect.stringMatching(/^style-src/)]));
    expect(secure.consoleErrors.join('\n')).toMatch(/Content Security Policy/);
    const bare = await visit('/canary/bare');
    expect(bare.dialogs).toEqual(['canary']);
    await secure.page.close();
    await bare.page.close();
  });

  it('serves a typical plan page with its headers, styled, with nothing blocked and nothing logged', async () => {
    const seen = await visit(pagePath(typical));
    expect(seen.status).toBe(200);
    expect(seen.headers).toMatchObject({
      'content-type': PAGE_HEADERS.html,
      'cache-control': PAGE_HEADERS.cacheable,
      ...PAGE_SECURITY_HEADERS,
    });
    expect({ violations: seen.violations, errors: seen.consoleErrors, pageErrors: seen.pageErrors }).toEqual({
      violations: [],
      errors: [],
      pageErrors: [],
    });
    // The stylesheet applied: the policy let it through by its hash.
    const styled = await seen.page.evaluate(() => {
      const { document, getComputedStyle } = globalThis as unknown as PageGlobals;
      return {
        margin: getComputedStyle(document.body).margin,
        button: getComputedStyle(document.querySelector('a.open')).textDecorationLine,
      };
    });
    expect(styled).toEqual({ margin: '0px', button: 'none' });
    expect(seen.requests).toEqual([`GET ${typical.coverUrl}`]);
    const shown = await inspect(seen.page);
    expect(shown).toMatchObject({ title: typical.title, heading: typical.title, summary: typical.summary });
    expect(shown.links).toEqual([typical.appUrl]);
    await seen.page.close();
  });

  it('weighs at most 15 KB before compression for a typical plan', async () => {
    const seen = await visit(pagePath(typical));
    expect(seen.bodyBytes).toBeGreaterThan(1000);
    expect(seen.bodyBytes).toBeLessThanOrEqual(15 * 1024);
    await seen.page.close();
  });

  it('draws the fallback cover without any request, for both disciplines', async () => {
    for (const plan of [fallbackRunning, fallbackStrength]) {
      const seen = await visit(pagePath(plan));
      expect(seen.requests).toEqual([]);
      expect(seen.violations).toEqual([]);
      expect(seen.consoleErrors).toEqual([]);
      const box = await seen.page.locator('.fallback').boundingBox();
      expect(box?.height).toBeGreaterThan(100);
      await seen.page.close();
    }
  });

  /** The cover's pixels once its image has loaded or failed, and whether it loaded. */
  async function coverShown(plan: Plan): Promise<{ png: Buffer; loaded: boolean | null }> {
    const seen = await visit(pagePath(plan), { width: 375 });
    const image = seen.page.locator('.cover img');
    let loaded: boolean | null = null;
    if ((await image.count()) > 0) {
      await seen.page.waitForFunction(
        (img) => (img as unknown as { complete: boolean }).complete,
        await image.elementHandle(),
      );
      loaded = await image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth > 0);
    }
    const png = await seen.page.locator('.cover').screenshot({ animations: 'disabled' });
    await seen.page.close();
    return { png, loaded };
  }

  it('shows the drawn fallback, pixel for pixel, where a cover fails to load: an unresolved or a refusing host', async () => {
    const fallback = await coverShown(fallbackStrength);
    expect(fallback.loaded).toBeNull();
    for (const plan of [unresolvedCover, refusedCover]) {
      const shown = await coverShown(plan);
      expect(shown.loaded, plan.coverUrl ?? '').toBe(false);
      expect(shown.png.equals(fallback.png), `${plan.coverUrl}: the fallback, no broken-image icon`).toBe(
        true,
      );
    }
  });

  it('lays a cover that loads over the whole fallback', async () => {
    const fallback = await coverShown(fallbackStrength);
    const shown = await coverShown(loadedCover);
    expect(shown.loaded).toBe(true);
    expect(shown.png.equals(fallback.png)).toBe(false);
    const seen = await visit(pagePath(loadedCover));
    const [box, imageBox] = await Promise.all([
      seen.page.locator('.cover').boundingBox(),
      seen.page.locator('.cover img').boundingBox(),
    ]);
    // The image covers the whole cover (reaching past its edges, which the cover clips).
    expect(box && imageBox).toBeTruthy();
    if (box && imageBox) {
      expect(imageBox.x).toBeLessThanOrEqual(box.x);
      expect(imageBox.y).toBeLessThanOrEqual(box.y);
      expect(imageBox.x + imageBox.width).toBeGreaterThanOrEqual(box.x + box.width);
      expect(imageBox.y + imageBox.height).toBeGreaterThanOrEqual(box.y + box.height);
    }
    await seen.page.close();
  });

  it('shows hostile titles and summaries as text and runs no script, with the policy', async () => {
    for (const [index, plan] of hostile.entries()) {
      const text = HOSTILE_TEXT[index];
      const seen = await visit(pagePath(plan));
      expect(seen.dialogs).toEqual([]);
      expect(seen.pageErrors).toEqual([]);
      expect(seen.consoleErrors).toEqual([]);
      expect(seen.violations).toEqual([]);
      const shown = await inspect(seen.page);
      expect(shown).toMatchObject({
        // document.title strips and collapses ASCII whitespace only
        title: (text?.title ?? '').replace(/[\t\n\f\r ]+/g, ' ').trim(),
        heading: text?.title ?? '',
        summary: text?.summary ?? '',
        scripts: 0,
        handlers: [],
        links: [plan.appUrl],
      });
      await seen.page.close();
    }
  });

  it('shows them as text and runs no script without the policy too: the escaping alone holds', async () => {
    for (const [index, plan] of hostile.entries()) {
      const text = HOSTILE_TEXT[index];
      const seen = await visit(`/bare${pagePath(plan)}`);
      expect(seen.dialogs).toEqual([]);
      expect(seen.pageErrors).toEqual([]);
      const shown = await inspect(seen.page);
      expect(shown).toMatchObject({ heading: text?.title ?? '', scripts: 0, handlers: [] });
      expect(shown.images.every((src) => src?.startsWith('https://covers.test/'))).toBe(true);
      await seen.page.close();
    }
  });

  it('answers the not-found page with 404, styled, with nothing blocked, and a link to the app', async () => {
    const seen = await visit(notFound);
    expect(seen.status).toBe(404);
    expect(seen.headers).toMatchObject(PAGE_SECURITY_HEADERS);
    expect(seen.violations).toEqual([]);
    expect(seen.requests).toEqual([]);
    // Chromium logs the document's own 404 status; nothing else may be logged.
    expect(seen.consoleErrors.filter((line) => !/status of 404/.test(line))).toEqual([]);
    const shown = await inspect(seen.page);
    expect(shown).toMatchObject({
      title: 'Plan not found',
      heading: 'Plan not found',
      links: ['trainingplans://'],
    });
    await seen.page.close();
  });

  it("serves the home page in the plan pages' look, with nothing blocked, saying what the API is, how to call it and where to ask for a key", async () => {
    const seen = await visit(PATHS.home);
    expect(seen.status).toBe(200);
    expect(seen.headers).toMatchObject(ANSWER_HEADERS.home);
    expect({ violations: seen.violations, errors: seen.consoleErrors, pageErrors: seen.pageErrors }).toEqual({
      violations: [],
      errors: [],
      pageErrors: [],
    });
    expect(seen.requests).toEqual([]);
    // The pages' stylesheet applied (its policy let it through by its hash): the card, the button.
    const { text, ...style } = await seen.page.evaluate(() => {
      const { document, getComputedStyle } = globalThis as unknown as PageGlobals;
      return {
        margin: getComputedStyle(document.body).margin,
        button: getComputedStyle(document.querySelector('a.open')).textDecorationLine,
        cards: document.querySelectorAll('article .text').length,
        text: document.body.innerText,
      };
    });
    expect(style).toEqual({ margin: '0px', button: 'none', cards: 1 });
    for (const said of [
      'Training Plan Catalog',
      `GET ${PATHS.plans}`,
      'X-Api-Key',
      ...DISCIPLINES.map((discipline) => `?discipline=${discipline}`),
      CONTACT,
    ])
      expect(text, said).toContain(said);
    expect(await inspect(seen.page)).toMatchObject({
      title: 'Training Plan Catalog',
      heading: 'Training Plan Catalog',
      scripts: 0,
      handlers: [],
      links: [`mailto:${CONTACT}`, PATHS.openapi],
    });
    await seen.page.close();
  });

  it('downloads openapi.yaml from the home page, as the link says, and stays on the page', async () => {
    const seen = await visit(PATHS.home);
    const [download] = await Promise.all([
      seen.page.waitForEvent('download', { timeout: 10_000 }),
      seen.page.click(`a[href="${PATHS.openapi}"]`),
    ]);
    expect(download.suggestedFilename()).toBe('openapi.yaml');
    expect(await download.failure()).toBeNull();
    expect(seen.page.url()).toBe(origin + PATHS.home);
    await seen.page.close();
  });

  it('fits a 375 px phone without sideways scrolling, even with a very long title', async () => {
    for (const path of [
      pagePath(longTitle),
      pagePath(typical),
      notFound,
      pagePath(hostile[3] as Plan),
      PATHS.home,
    ]) {
      const seen = await visit(path, { width: 375 });
      const width = await seen.page.evaluate(
        () => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth,
      );
      expect(width, path).toBeLessThanOrEqual(375);
      await seen.page.close();
    }
  });

  it('has no accessibility violation axe-core can find, in light and dark mode', async () => {
    for (const path of [
      pagePath(typical),
      pagePath(fallbackStrength),
      pagePath(hostile[3] as Plan),
      notFound,
      PATHS.home,
    ])
      for (const dark of [false, true]) {
        const seen = await visit(path, { dark });
        const results = await new AxeBuilder({ page: seen.page }).analyze();
        const found = results.violations.map(
          (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
        );
        expect(found, `${path} ${dark ? 'dark' : 'light'}`).toEqual([]);
        expect(results.passes.length).toBeGreaterThan(10);
        await seen.page.close();
      }
  });

  it('writes screenshots at 375 and 1280 px for a person to look at', async () => {
    const shots: Record<string, string> = {
      typical: pagePath(typical),
      'no-cover-running': pagePath(fallbackRunning),
      'no-cover-strength': pagePath(fallbackStrength),
      'cover-unreachable': pagePath(unresolvedCover),
      hostile: pagePath(hostile[3] as Plan),
      'long-title': pagePath(longTitle),
      'not-found': notFound,
      home: PATHS.home,
    };
    for (const [name, path] of Object.entries(shots))
      for (const width of WIDTHS) {
        const seen = await visit(path, { width });
        const file = join(SHOTS, `${name}-${width}.png`);
        await seen.page.screenshot({ path: file, fullPage: true });
        const png = await readFile(file);
        expect(png.subarray(1, 4).toString()).toBe('PNG');
        expect(png.readUInt32BE(16)).toBe(width);
        await seen.page.close();
      }
    for (const [name, path] of [
      ['typical', pagePath(typical)],
      ['home', PATHS.home],
    ]) {
      const dark = await visit(path as string, { width: 375, dark: true });
      await dark.page.screenshot({ path: join(SHOTS, `${name}-dark-375.png`), fullPage: true });
      await dark.page.close();
    }
  });
});
