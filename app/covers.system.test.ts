/**
 * `npm start` shows real covers with no network: the plan page the banner names, opened in Chromium with every
 * request that is not to the local stack refused, draws its fixture cover (served by the local edge itself)
 * under the page's own Content-Security-Policy. Runs in `npm run test:system` (Debian's Chromium).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../testing/chromium.ts';
import { type ServeProcess, scratchDir, startCatalog } from '../testing/cli.ts';
import { freePort } from '../testing/postgres.ts';

describe('the local stack in Chromium', () => {
  let scratch: { dir: string; remove: () => Promise<void> };
  let start: ServeProcess;

  beforeAll(async () => {
    scratch = await scratchDir('catalog-covers-');
    start = await startCatalog(['start', '--port', String(await freePort())], {
      ready: /Local stack ready on (http:\/\/\S+)/,
      cwd: scratch.dir,
    });
  });
  afterAll(async () => {
    await start?.stop();
    await scratch?.remove();
  });

  it("draws the sample page's cover from the local edge, with nothing leaving the machine", async () => {
    const page = /a plan's page, for people \(no key\): (http:\/\/\S+)/.exec(start.lines.join('\n'))?.[1];
    expect(page).toBeDefined();
    const context = await launchChromium(`${scratch.dir}/profile`);
    try {
      const elsewhere: string[] = [];
      await context.route(
        (url) => !url.href.startsWith(start.url),
        (route) => {
          elsewhere.push(route.request().url());
          return route.abort('blockedbyclient');
        },
      );
      const tab = await context.newPage();
      const violations: string[] = [];
      tab.on('console', (message) => {
        if (message.type() === 'error') violations.push(message.text());
      });
      await tab.goto(page ?? '', { waitUntil: 'load' });
      const cover = await tab.evaluate(() => {
        const image = (
          globalThis as unknown as {
            document: {
              querySelector(s: string): { src: string; complete: boolean; naturalWidth: number } | null;
            };
          }
        ).document.querySelector('.cover img');
        return image && { src: image.src, complete: image.complete, width: image.naturalWidth };
      });
      expect(cover).toEqual({
        src: expect.stringMatching(/\/_local\/covers\/\w+\.png$/),
        complete: true,
        width: 640,
      });
      expect(cover?.src.startsWith(`${start.url}/`)).toBe(true);
      expect(violations).toEqual([]);
      expect(elsewhere).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
