import { createHash } from 'node:crypto';
import { htmlUnescape } from 'escape-goat';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../contract/errors.ts';
import { PAGE_CSP, PAGE_SECURITY_HEADERS, PAGE_STYLE_HASH, PAGE_STYLESHEET } from '../contract/index.ts';
import {
  HOSTILE_TEXT,
  hostileRows,
  PAGE_LINKS,
  planFrom,
  plansFrom,
  typicalPlan,
  UNPUBLISHABLE_TEXT,
} from '../testing/pages.ts';
import { COVER_URL_MAX_LENGTH, type Plan, SUMMARY_MAX_LENGTH, TITLE_MAX_LENGTH } from './model.ts';
import { renderNotFoundPage, renderPlanPage } from './pages.ts';

/** The decoded text of the first element matching `open` (e.g. `<h1 dir="auto">`) up to `</tag>`. */
function elementText(page: string, open: string, tag: string): string | undefined {
  const start = page.indexOf(open);
  if (start < 0) return undefined;
  const end = page.indexOf(`</${tag}>`, start);
  return htmlUnescape(page.slice(start + open.length, end));
}

/** The decoded value of `attribute` on the first tag that starts with `tagStart` (e.g. `<meta property="og:title"`). */
function attributeOf(page: string, tagStart: string, attribute: string): string | undefined {
  const start = page.indexOf(tagStart);
  if (start < 0) return undefined;
  const tag = page.slice(start, page.indexOf('>', start) + 1);
  const match = new RegExp(`\\s${attribute}="([^"]*)"`).exec(tag);
  return match?.[1] === undefined ? undefined : htmlUnescape(match[1]);
}

/** Every start or end tag name in the page, as written. */
function tagNames(page: string): Set<string> {
  return new Set([...page.matchAll(/<\/?([a-zA-Z][^\s/>]*)/g)].map((match) => match[1] ?? ''));
}

/** Every attribute name written inside a tag. */
function attributeNames(page: string): Set<string> {
  const names = new Set<string>();
  for (const tag of page.matchAll(/<[a-zA-Z][^>]*>/g))
    for (const attribute of tag[0].matchAll(/\s([^\s="'>/]+)(?:="[^"]*")?/g)) names.add(attribute[1] ?? '');
  return names;
}

/** The tags and attributes this module writes; markup from a source row would add others. */
const OUR_TAGS = new Set(
  'html head meta title link style body header p main article img div svg g rect path circle h1 dl dt dd a'.split(
    ' ',
  ),
);
const OUR_ATTRIBUTES = new Set(
  'lang charset name content rel href property class src alt decoding dir aria-hidden aria-describedby id viewBox focusable fill fill-opacity x y width height rx stroke stroke-opacity stroke-width stroke-linecap d stroke-dasharray cx cy r'.split(
    ' ',
  ),
);

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

describe('a plan page with hostile titles and summaries', () => {
  const plans = plansFrom(hostileRows());
  const pages = plans.map((plan) => ({ plan, page: renderPlanPage(plan) }));

  it('shows each title and summary as the same text in the heading, the summary and the head', () => {
    for (const { plan, page } of pages) {
      const source = HOSTILE_TEXT.find((text) => text.id === plan.id);
      expect(source).toBeDefined();
      expect(elementText(page, '<h1 dir="auto">', 'h1')).toBe(source?.title ?? '');
      expect(elementText(page, '<p class="summary" dir="auto">', 'p')).toBe(source?.summary ?? '');
      expect(elementText(page, '<title>', 'title')).toBe(source?.title ?? '');
      expect(attributeOf(page, '<meta property="og:title"', 'content')).toBe(source?.title ?? '');
      expect(attributeOf(page, '<meta name="twitter:title"', 'content')).toBe(source?.title ?? '');
      expect(attributeOf(page, '<meta name="description"', 'content')).toBe(source?.summary ?? '');
      expect(attributeOf(page, '<meta property="og:description"', 'content')).toBe(source?.summary ?? '');
    }
  });

  it('adds no element, attribute or script of its own: the markup is only ours', () => {
    for (const { page } of pages) {
      expect([...tagNames(page)].filter((name) => !OUR_TAGS.has(name))).toEqual([]);
      expect([...attributeNames(page)].filter((name) => !OUR_ATTRIBUTES.has(name))).toEqual([]);
      expect(page).not.toMatch(/<script|<iframe|<base|<svg onload|<img src=x|<!--/i);
      expect(page).not.toMatch(/(?:href|src)="javascript:/i);
    }
  });

  it('escapes every markup character of the source in text and in attributes', () => {
    const [, breakout] = pages;
    expect(breakout?.page).toContain('<h1 dir="auto">&quot;&gt;&lt;img src=x onerror=alert(2)&gt;</h1>');
    expect(breakout?.page).toContain(
      '<meta property="og:title" content="&quot;&gt;&lt;img src=x onerror=alert(2)&gt;">',
    );
    const entities = pages[3]?.page ?? '';
    // A source's own entity text is shown as typed, not decoded.
    expect(entities).toContain('&amp;amp; &amp;lt;b&amp;gt; &lt;/title&gt;&lt;/style&gt;&lt;!--');
  });

  it('keeps a javascript: text as text, never as a link', () => {
    const page = pages[2]?.page ?? '';
    expect(elementText(page, '<h1 dir="auto">', 'h1')).toBe('javascript:alert(5)');
    const hrefs = [...page.matchAll(/\shref="([^"]*)"/g)].map((match) => match[1]);
    expect(hrefs).toEqual([
      `${PAGE_LINKS.baseUrl}/plans/33333333-3333-4333-8333-333333333333`,
      'trainingplans://plan/33333333-3333-4333-8333-333333333333',
    ]);
  });

  it('percent-encodes a cover URL that tries to close its attribute', () => {
    const page = pages[1]?.page ?? '';
    expect(page).toContain('<img src="https://covers.test/a%22onerror=%22alert(8).svg" alt=""');
    expect(attributeOf(page, '<meta property="og:image"', 'content')).toBe(
      'https://covers.test/a%22onerror=%22alert(8).svg',
    );
  });

  it('keeps unicode tricks that are text as text', () => {
    const page = pages[3]?.page ?? '';
    expect(page).toContain(
      '<h1 dir="auto">Bidi \u200Fעברית\u200E trick\u2028line\u2029para zero\u200Bwidth</h1>',
    );
    expect(elementText(page, '<p class="summary" dir="auto">', 'p')).toMatch(/^Tab\there /);
  });

  it('still holds a title or summary no build publishes: NUL as U+FFFD, an override isolated in its element', () => {
    // The builder refuses these rows (builder/text.ts); the page does not rely on it.
    const plan: Plan = { ...planFrom(), ...UNPUBLISHABLE_TEXT };
    const page = renderPlanPage(plan);
    expect(page).not.toContain('\u0000');
    expect(elementText(page, '<p class="summary" dir="auto">', 'p')).toBe('NUL\uFFFDhere');
    // dir="auto" makes the element its own bidi isolate: an override cannot reach the text around it.
    expect(page).toContain('<h1 dir="auto">Bidi \u202Egnp.exe\u202C trick</h1>');
  });

  it('replaces controls, lone surrogates and noncharacters, which a document must not contain', () => {
    const plan: Plan = { ...planFrom(), title: 'a\u0001b\u007Fc\u0085d\uD800e\uFFFEf\u{10FFFF}g\tend' };
    expect(elementText(renderPlanPage(plan), '<h1 dir="auto">', 'h1')).toBe(
      'a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf\uFFFDg\tend',
    );
  });
});

describe('links and covers on a plan page', () => {
  it('uses a cover only when it is an https: URL, else the drawn fallback and no image tag', () => {
    for (const coverUrl of [
      'javascript:alert(1)',
      'http://covers.test/a.jpg',
      'data:image/svg+xml,<svg onload=alert(1)>',
      '//covers.test/a.jpg',
      'not a url',
    ]) {
      const page = renderPlanPage({ ...planFrom(), coverUrl });
      expect(page, coverUrl).not.toContain('<img');
      expect(page, coverUrl).not.toContain('og:image');
      expect(page, coverUrl).toContain('<div class="cover fallback running" aria-hidden="true"><svg');
    }
    // The cover lies over the same drawing, which shows wherever the image does not (it fails to load).
    expect(renderPlanPage(planFrom())).toMatch(
      /<div class="cover fallback running" aria-hidden="true"><svg .*<\/svg><img src="https:\/\/covers\.test\/couch-to-5k\.svg" alt="" decoding="async"><\/div>/s,
    );
  });

  it("uses a cover on the page's own origin, http:// included (a local build's fixture covers), and no other", () => {
    const local = { ...PAGE_LINKS, baseUrl: 'http://127.0.0.1:8790' };
    const own = renderPlanPage({
      ...planFrom({}, local),
      coverUrl: 'http://127.0.0.1:8790/_local/covers/track.png',
    });
    expect(own).toContain(
      '<img src="http://127.0.0.1:8790/_local/covers/track.png" alt="" decoding="async">',
    );
    expect(own).toContain(
      '<meta property="og:image" content="http://127.0.0.1:8790/_local/covers/track.png">',
    );
    for (const coverUrl of ['http://127.0.0.1:8791/_local/covers/track.png', 'http://localhost:8790/a.png']) {
      const other = renderPlanPage({ ...planFrom({}, local), coverUrl });
      expect(other, coverUrl).not.toContain('<img');
    }
  });

  it('refuses an app link that would run code or open a web page, naming the app scheme setting', () => {
    for (const appUrl of [
      'javascript://plan/x',
      'data:text/html,x',
      'https://plan/x',
      'vbscript:x',
      'nope',
    ]) {
      expect(() => renderPlanPage({ ...planFrom(), appUrl }), appUrl).toThrow(ConfigError);
      expect(() => renderPlanPage({ ...planFrom(), appUrl }), appUrl).toThrow(/setting:appScheme/);
    }
    expect(() => renderNotFoundPage({ appScheme: 'javascript' })).toThrow(ConfigError);
  });

  it('refuses a webUrl that is not http(s), naming the base URL setting', () => {
    expect(() => renderPlanPage({ ...planFrom(), webUrl: 'javascript:alert(1)//' })).toThrow(
      /setting:baseUrl/,
    );
  });
});

describe('a plan page with null fields', () => {
  const plan = planFrom({
    summary: '  ',
    cover_url: null,
    level: null,
    days_per_week: null,
    est_minutes_per_session: '',
    discipline: 'strength',
    weeks_count: 1,
  });
  const page = renderPlanPage(plan);

  it('never prints null, undefined or NaN', () => {
    expect(page).not.toMatch(/null|undefined|NaN/);
  });

  it('leaves out the facts the catalog does not give, and keeps the rest', () => {
    expect(page).toContain(
      '<dl><div><dt>Type</dt><dd>Workouts</dd></div><div><dt>Length</dt><dd>1 week</dd></div></dl>',
    );
    expect(page).not.toMatch(/Level|Days per week|Per session/);
  });

  it('has no summary paragraph, and describes the plan from its facts instead', () => {
    expect(page).not.toContain('class="summary"');
    expect(attributeOf(page, '<meta name="description"', 'content')).toBe('Workouts plan: 1 week.');
  });

  it('draws the fallback cover inline: no image element, no og:image, a summary card', () => {
    expect(page).toContain('<div class="cover fallback strength" aria-hidden="true"><svg');
    expect(page).not.toMatch(/<img|og:image|twitter:image|url\(/);
    expect(attributeOf(page, '<meta name="twitter:card"', 'content')).toBe('summary');
  });

  it('shows every fact when the catalog gives them, in words', () => {
    const full = renderPlanPage(
      planFrom({ level: 'advanced', days_per_week: 1, est_minutes_per_session: 1 }),
    );
    expect(full).toContain(
      '<dl><div><dt>Type</dt><dd>Outdoor</dd></div><div><dt>Level</dt><dd>Advanced</dd></div><div><dt>Length</dt><dd>9 weeks</dd></div><div><dt>Days per week</dt><dd>1</dd></div><div><dt>Per session</dt><dd>about 1 minute</dd></div></dl>',
    );
  });
});

describe('sharing a plan page', () => {
  const upper = '6F1C0E52-3D1A-4C47-9E0B-2B6F4F0E9A11';
  const plan = planFrom({ id: upper });
  const page = renderPlanPage(plan);
  const webUrl = 'https://plans.example.com/plans/6f1c0e52-3d1a-4c47-9e0b-2b6f4f0e9a11';

  it('links canonically to webUrl, with the id in lowercase', () => {
    expect(plan.webUrl).toBe(webUrl);
    expect(attributeOf(page, '<link rel="canonical"', 'href')).toBe(webUrl);
    expect(attributeOf(page, '<meta property="og:url"', 'content')).toBe(webUrl);
    expect(page).not.toContain(upper);
  });

  it('carries the Open Graph and Twitter card tags a chat preview reads', () => {
    const tags = {
      '<meta property="og:type"': 'website',
      '<meta property="og:site_name"': 'Training Plans',
      '<meta property="og:title"': 'Couch to 5K',
      '<meta property="og:description"': 'Walk-run intervals that build to thirty minutes of easy running.',
      '<meta property="og:image"': 'https://covers.test/couch-to-5k.svg',
      '<meta name="twitter:card"': 'summary_large_image',
      '<meta name="twitter:title"': 'Couch to 5K',
      '<meta name="twitter:description"': 'Walk-run intervals that build to thirty minutes of easy running.',
      '<meta name="twitter:image"': 'https://covers.test/couch-to-5k.svg',
    };
    for (const [tag, value] of Object.entries(tags))
      expect(attributeOf(page, tag, 'content'), tag).toBe(value);
    expect(elementText(page, '<title>', 'title')).toBe('Couch to 5K');
  });

  it('opens the plan in the app, saying that it needs the app', () => {
    expect(page).toContain(
      '<a class="open" href="trainingplans://plan/6f1c0e52-3d1a-4c47-9e0b-2b6f4f0e9a11" aria-describedby="app-note">Open in the app</a>',
    );
    expect(page).toMatch(
      /<p class="note" id="app-note">[^<]*works only on a phone or tablet where the app is installed/,
    );
  });
});

describe('the not-found page', () => {
  const page = renderNotFoundPage({ appScheme: 'trainingplans' });

  it('says the plan is not in the catalog, in the pages’ style, and is not indexed', () => {
    expect(elementText(page, '<title>', 'title')).toBe('Plan not found');
    expect(elementText(page, '<h1>', 'h1')).toBe('Plan not found');
    expect(page).toContain('<meta name="robots" content="noindex">');
    expect(page).toContain(`<style>${PAGE_STYLESHEET}</style>`);
    expect(page).not.toMatch(/canonical|og:/);
  });

  it('sends the reader back with the Back button, and links only to the app, which needs the app', () => {
    expect(page).toContain("use your browser's Back button");
    const hrefs = [...page.matchAll(/\shref="([^"]*)"/g)].map((match) => match[1]);
    expect(hrefs).toEqual(['trainingplans://']);
    expect(page).toMatch(
      /<p class="note" id="app-note">[^<]*works only on a phone or tablet where the [^<]*app is installed/,
    );
  });

  it('has only our markup, and no relative URL (it is served at any depth under /plans/)', () => {
    expect([...tagNames(page)].filter((name) => !OUR_TAGS.has(name))).toEqual([]);
    expect(page).not.toMatch(/(?:href|src)="(?![a-z][a-z0-9+.-]*:)/);
  });
});

describe('the page stylesheet and the Content-Security-Policy', () => {
  const pages = [
    renderPlanPage(typicalPlan()),
    renderPlanPage(planFrom({ cover_url: null })),
    renderNotFoundPage({ appScheme: 'x' }),
  ];

  it('names the one inline stylesheet by its hash: change the stylesheet and PAGE_STYLE_HASH together', () => {
    expect(PAGE_STYLE_HASH).toBe(sha256(PAGE_STYLESHEET));
    for (const page of pages) {
      const styles = [...page.matchAll(/<style>([^<]*)<\/style>/g)].map((match) => match[1] ?? '');
      expect(styles).toHaveLength(1);
      expect(PAGE_CSP).toContain(`style-src ${sha256(styles[0] ?? '')}`);
      expect(page).not.toMatch(/\sstyle=|<link rel="stylesheet"|<script/);
    }
  });

  it("allows no script, nothing by default, images over https: or from the page's own origin, and refuses framing, base and forms", () => {
    const directives = new Map(
      PAGE_CSP.split(';').map((part) => {
        const [name = '', ...sources] = part.trim().split(/\s+/);
        return [name, sources.join(' ')] as const;
      }),
    );
    expect(Object.fromEntries(directives)).toEqual({
      'default-src': "'none'",
      'style-src': PAGE_STYLE_HASH,
      'img-src': "https: 'self'",
      'frame-ancestors': "'none'",
      'base-uri': "'none'",
      'form-action': "'none'",
    });
    expect(PAGE_CSP).not.toMatch(/unsafe|script-src|\*/);
    expect(PAGE_SECURITY_HEADERS).toEqual({
      'content-security-policy': PAGE_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    });
  });
});

describe('page weight', () => {
  it('is at most 15 KB before compression for a typical plan', () => {
    const bytes = Buffer.byteLength(renderPlanPage(typicalPlan()));
    expect(bytes).toBeGreaterThan(1000);
    expect(bytes).toBeLessThanOrEqual(15 * 1024);
  });

  it('is at most 15 KB for a plan at every limit of its source row: title, summary and cover URL', () => {
    const cover = `https://images.example.com/${'c'.repeat(COVER_URL_MAX_LENGTH - 31)}.jpg`;
    expect(cover).toHaveLength(COVER_URL_MAX_LENGTH);
    const plan = {
      ...typicalPlan(),
      title: 'T'.repeat(TITLE_MAX_LENGTH),
      summary: 'S'.repeat(SUMMARY_MAX_LENGTH),
      coverUrl: cover,
    };
    expect(Buffer.byteLength(renderPlanPage(plan))).toBeLessThanOrEqual(15 * 1024);
  });
});
