/**
 * Debian's Chromium for the browser tests (`npm run test:system`), driven by playwright-core: headless, no
 * sandbox (the tests run as root in CI), and quiet (no background traffic, no updates, no sync). Test support
 * only.
 */
import { type BrowserContext, chromium } from 'playwright-core';

/** Where Chromium is: `CHROMIUM_PATH`, else Debian's. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A fresh browser with its profile in `profileDir` (a scratch directory the caller removes). */
export function launchChromium(profileDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
