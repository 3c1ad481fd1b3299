/** Test support for the plan pages: hostile source rows, and plans made from rows by the real validator. */
import { readFileSync } from 'node:fs';
import type { LinkConfig, Plan } from '../builder/model.ts';
import { validateRows } from './plans.ts';

/** The links of the page tests: a production-like https base URL. */
export const PAGE_LINKS: LinkConfig = { baseUrl: 'https://plans.example.com', appScheme: 'trainingplans' };

/** A valid, published, approved source row; `overrides` changes or adds fields. */
export function sourceRow(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: '6f1c0e52-3d1a-4c47-9e0b-2b6f4f0e9a11',
    title: 'Couch to 5K',
    summary: 'Walk-run intervals that build to thirty minutes of easy running.',
    cover_url: 'https://covers.test/couch-to-5k.svg',
    level: 'beginner',
    discipline: 'running',
    weeks_count: 9,
    days_per_week: 3,
    est_minutes_per_session: 30,
    published: true,
    approved: true,
    ...overrides,
  };
}

/** Plans from source rows through the builder's own validation; throws when a row is invalid. */
export function plansFrom(rows: readonly unknown[], links: LinkConfig = PAGE_LINKS): Plan[] {
  const report = validateRows(rows, links);
  if (report.invalid.length > 0) throw new Error(`invalid test rows: ${JSON.stringify(report.invalid)}`);
  return report.plans;
}

/** One plan from one source row. */
export function planFrom(overrides: Record<string, unknown> = {}, links: LinkConfig = PAGE_LINKS): Plan {
  const [plan] = plansFrom([sourceRow(overrides)], links);
  if (!plan) throw new Error('no plan');
  return plan;
}

/**
 * A typical plan: the first plan of the repository's fixtures (summary, every fact), with a cover on the
 * test host the browser tests answer themselves (that fixture names no cover).
 */
export function typicalPlan(links: LinkConfig = PAGE_LINKS): Plan {
  const rows = JSON.parse(readFileSync(new URL('../fixtures/plans.json', import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >[];
  const [plan] = plansFrom(
    rows.slice(0, 1).map((row) => ({ ...row, cover_url: 'https://covers.test/full-body-basics.svg' })),
    links,
  );
  if (!plan) throw new Error('no plan in the fixtures');
  return plan;
}

/**
 * Titles and summaries a hostile or careless source could hold and the builder publishes: markup and script in
 * element text and attribute positions, `javascript:` URLs, entity look-alikes, and unicode tricks that are text
 * (line and paragraph separators, right-to-left marks and script, zero-width characters). Control characters and
 * bidirectional overrides make a row invalid (builder/text.ts): {@link UNPUBLISHABLE_TEXT} has them, for the
 * page's own defence. Each is one row's title and summary.
 */
export const HOSTILE_TEXT = [
  {
    id: '11111111-1111-4111-8111-111111111111',
    title: '<script>alert("title")</script>',
    summary: '</p><script>alert(1)</script><p>',
  },
  {
    id: '22222222-2222-4222-8222-222222222222',
    title: '"><img src=x onerror=alert(2)>',
    summary: '\'><svg onload=alert(3)> " onmouseover="alert(4)',
  },
  {
    id: '33333333-3333-4333-8333-333333333333',
    title: 'javascript:alert(5)',
    summary: '<a href="javascript:alert(6)">click</a> <iframe src="javascript:alert(7)"></iframe>',
  },
  {
    id: '44444444-4444-4444-8444-444444444444',
    title: 'Bidi \u200Fעברית\u200E trick\u2028line\u2029para zero\u200Bwidth',
    summary: 'Tab\there &amp; &lt;b&gt; </title></style><!-- <base href="https://evil.test/">',
  },
] as const;

/** The hostile texts as source rows (with a cover URL that tries to break out of its attribute). */
export function hostileRows(): Record<string, unknown>[] {
  return HOSTILE_TEXT.map((text, index) =>
    sourceRow({
      ...text,
      cover_url: index === 1 ? 'https://covers.test/a"onerror="alert(8).svg' : null,
    }),
  );
}

/**
 * A title and a summary no build publishes (the builder refuses their rows) but a page must still render safely:
 * a right-to-left override left open, and a NUL.
 */
export const UNPUBLISHABLE_TEXT = {
  title: 'Bidi \u202Egnp.exe\u202C trick',
  summary: 'NUL\u0000here',
} as const;
