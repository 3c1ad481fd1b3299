/**
 * The plan pages (docs/decisions.md#plan-pages): pure functions from a plan to its static HTML page, and the
 * page for a plan that is not in the catalog. No script, no external font, one inline stylesheet whose SHA-256
 * the Content-Security-Policy names. Titles and summaries are untrusted: every value reaches the markup through
 * the escaping `html` template; a URL is first checked for its scheme and serialised by the WHATWG URL parser.
 */
import { createHash } from 'node:crypto';
import { htmlEscape } from 'escape-goat';
import { ConfigError, settingRef } from '../contract/errors.ts';
import {
  DISCIPLINE_LABELS,
  type Discipline,
  type Level,
  PAGE_HEADERS,
  PAGE_SITE_NAME,
  pageDocument,
} from '../contract/index.ts';
import type { Plan } from './model.ts';

/** A piece of markup built by {@link html}: its interpolated values were escaped. */
class Markup {
  constructor(readonly text: string) {}
}

type Value = Markup | string | number | null | readonly Markup[];

/**
 * Characters an HTML document must not contain (C0 and C1 controls but tab, LF, FF and CR, lone surrogates,
 * noncharacters): each becomes U+FFFD, so the reader sees that something was there.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these controls are exactly what it matches
const NOT_IN_HTML = /[\u0000-\u0008\u000B\u000E-\u001F\u007F-\u009F\p{Cs}\p{Noncharacter_Code_Point}]/gu;

function render(value: Value): string {
  if (value instanceof Markup) return value.text;
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return htmlEscape(value.replace(NOT_IN_HTML, '\uFFFD'));
  return value.map((part) => part.text).join('');
}

/**
 * The one way markup is made here: interpolated values are escaped (`&<>"'`) unless they are {@link Markup};
 * attributes are always double-quoted, so one escaping serves text and attributes. `null` renders nothing.
 */
function html(strings: TemplateStringsArray, ...values: Value[]): Markup {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new Markup(out);
}

/** Schemes an app link must not have: they run code, read local data, or open a web page, not the app. */
const NOT_APP_SCHEMES = /^(javascript|vbscript|data|blob|file|filesystem|about|https?):$/;

function parsed(value: string): URL | undefined {
  return URL.canParse(value) ? new URL(value) : undefined;
}

/** The plan's `webUrl`, serialised; it comes from the base URL setting, so anything but http(s) is refused. */
function pageUrl(plan: Plan): string {
  const url = parsed(plan.webUrl);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new ConfigError(
      `plan ${plan.id}: webUrl ${JSON.stringify(plan.webUrl)} is not an http(s) URL; check ${settingRef('baseUrl')}`,
    );
  return url.href;
}

/** An app deep link, serialised; refused when the app scheme is one that runs code or reads local data. */
function appLink(value: string): string {
  const url = parsed(value);
  if (!url || NOT_APP_SCHEMES.test(url.protocol))
    throw new ConfigError(
      `the app link ${JSON.stringify(value)} cannot be a link on a plan page; ${settingRef('appScheme')} must name the app's own scheme`,
    );
  return url.href;
}

/** The cover's URL when `https:` or on the page's own origin (a local build's fixture covers), else null. */
function coverSource(plan: Plan): string | null {
  const url = plan.coverUrl === null ? undefined : parsed(plan.coverUrl);
  if (!url || url.hostname === '') return null;
  return url.protocol === 'https:' || url.origin === parsed(plan.webUrl)?.origin ? url.href : null;
}

/** The app's name, in the line that says a link needs it. */
const APP_NAME = 'Training Plans';
const APP_NOTE_ID = 'app-note';

const LEVEL_NAMES: Readonly<Record<Level, string | null>> = {
  none: null,
  beginner: 'Beginner',
  intermediate: 'Intermediate',
  advanced: 'Advanced',
};

/** `n` and the unit, plural but for 1: `1 week`, `12 weeks`. */
function count(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** The facts of a plan as label and value; a fact the catalog does not give is left out. */
function facts(plan: Plan): [label: string, value: string][] {
  const minutes = plan.estMinutesPerSession;
  const rows: [string, string | null][] = [
    ['Type', plan.disciplineLabel],
    ['Level', LEVEL_NAMES[plan.level]],
    ['Length', count(plan.weeksCount, 'week')],
    ['Days per week', plan.daysPerWeek === null ? null : String(plan.daysPerWeek)],
    ['Per session', minutes === null ? null : `about ${count(minutes, 'minute')}`],
  ];
  return rows.filter((row): row is [string, string] => row[1] !== null);
}

/** The page's description: the summary, or (without one) the facts in one line, in our own words. */
function description(plan: Plan): string {
  if (plan.summary !== null) return plan.summary;
  const parts = [count(plan.weeksCount, 'week')];
  if (plan.daysPerWeek !== null) parts.push(`${count(plan.daysPerWeek, 'day')} a week`);
  if (plan.estMinutesPerSession !== null)
    parts.push(`about ${count(plan.estMinutesPerSession, 'minute')} a session`);
  return `${plan.disciplineLabel} plan: ${parts.join(', ')}.`;
}

/** A small line drawing for a plan without a cover (or one that fails): a dumbbell for strength, a route for running. */
const FALLBACK_ICONS: Readonly<Record<Discipline, Markup>> = {
  strength: html`<svg viewBox="0 0 64 64" aria-hidden="true" focusable="false"><g fill="#fff" fill-opacity=".9"><rect x="6" y="22" width="8" height="20" rx="2"/><rect x="14" y="17" width="8" height="30" rx="2"/><rect x="42" y="17" width="8" height="30" rx="2"/><rect x="50" y="22" width="8" height="20" rx="2"/><rect x="22" y="29" width="20" height="6" rx="1"/></g></svg>`,
  running: html`<svg viewBox="0 0 64 64" aria-hidden="true" focusable="false"><g fill="none" stroke="#fff" stroke-opacity=".9" stroke-width="4" stroke-linecap="round"><path d="M10 50c10-2 12-12 22-14s14-10 22-20" stroke-dasharray="1 8"/></g><g fill="#fff" fill-opacity=".9"><circle cx="10" cy="50" r="5"/><circle cx="54" cy="16" r="5"/></g></svg>`,
};

/** The whole document around `body` (contract/index.ts `pageDocument`); `head.extra` adds tags to the head. */
function documentOf(head: { title: string; description: string; extra: Markup }, body: Markup): string {
  const tags = html`<title>${head.title}</title>
<meta name="description" content="${head.description}">
${head.extra}`;
  return pageDocument(tags.text, body.text);
}

/**
 * The page of one plan: title, summary, cover, facts, and a link to open it in the app; the head carries the
 * canonical link (`webUrl`), Open Graph and Twitter card tags. Throws `ConfigError` when `webUrl` is not
 * http(s) or `appUrl` has a scheme that runs code or reads local data (javascript:, data:, http(s): …).
 */
export function renderPlanPage(plan: Plan): string {
  const canonical = pageUrl(plan);
  const app = appLink(plan.appUrl);
  const image = coverSource(plan);
  const text = description(plan);

  const extra = html`<link rel="canonical" href="${canonical}">
<meta property="og:type" content="website">
<meta property="og:site_name" content="${PAGE_SITE_NAME}">
<meta property="og:title" content="${plan.title}">
<meta property="og:description" content="${text}">
<meta property="og:url" content="${canonical}">
${image === null ? null : html`<meta property="og:image" content="${image}">\n`}<meta name="twitter:card" content="${image === null ? 'summary' : 'summary_large_image'}">
<meta name="twitter:title" content="${plan.title}">
<meta name="twitter:description" content="${text}">
${image === null ? null : html`<meta name="twitter:image" content="${image}">\n`}`;

  // The cover: the drawn fallback with the image (if any) laid over it, without script. An image that
  // fails shows no text (its alternative text is empty: it is decorative, the heading names the plan) and
  // its broken-image icon is clipped away (it overflows the cover by 20 px on every side), so the drawing
  // stays visible.
  const coverImage = image === null ? null : html`<img src="${image}" alt="" decoding="async">`;
  const factList = facts(plan).map(([label, value]) => html`<div><dt>${label}</dt><dd>${value}</dd></div>`);
  const body = html`<article>
<div class="cover fallback ${plan.discipline}" aria-hidden="true">${FALLBACK_ICONS[plan.discipline]}${coverImage}</div>
<div class="text">
<h1 dir="auto">${plan.title}</h1>
${plan.summary === null ? null : html`<p class="summary" dir="auto">${plan.summary}</p>\n`}<dl>${factList}</dl>
<p><a class="open" href="${app}" aria-describedby="${APP_NOTE_ID}">Open in the app</a></p>
<p class="note" id="${APP_NOTE_ID}">This opens the plan in the ${APP_NAME} app, and works only on a phone or tablet where the app is installed.</p>
</div>
</article>`;

  return documentOf({ title: plan.title, description: text, extra }, body);
}

/**
 * The one static page for every plan path not in the catalog: it cannot know who sent the reader, so it points
 * to the Back button and links to the app itself (`<scheme>://`); not indexed. Throws `ConfigError` as
 * {@link renderPlanPage} for an unsafe app scheme.
 */
export function renderNotFoundPage(options: { readonly appScheme: string }): string {
  const app = appLink(`${options.appScheme}://`);
  const title = 'Plan not found';
  const extra = html`<meta name="robots" content="noindex">
`;
  const body = html`<article>
<div class="text">
<h1>${title}</h1>
<p class="summary">This plan is not in the catalog. It may have been withdrawn, or the link may be incomplete.</p>
<p class="summary">To return to the page that sent you here, use your browser's Back button. The plans you can follow are in the ${APP_NAME} app.</p>
<p><a class="open" href="${app}" aria-describedby="${APP_NOTE_ID}">Open the app</a></p>
<p class="note" id="${APP_NOTE_ID}">This works only on a phone or tablet where the ${APP_NAME} app is installed.</p>
</div>
</article>`;
  return documentOf({ title, description: 'This training plan is not in the catalog.', extra }, body);
}

/** Plans that take every branch of the page's markup, rendered for {@link PAGE_RENDERER}. */
const PROBE_PLANS: readonly Plan[] = [
  {
    id: '00000000-0000-4000-8000-000000000001',
    title: 'Probe <plan> & "title"',
    summary: "A summary with 'quotes'",
    coverUrl: 'https://images.example.com/cover.jpg',
    level: 'advanced',
    discipline: 'strength',
    disciplineLabel: DISCIPLINE_LABELS.strength,
    weeksCount: 1,
    daysPerWeek: 1,
    estMinutesPerSession: 1,
    webUrl: 'https://plans.example.com/plans/00000000-0000-4000-8000-000000000001',
    appUrl: 'probe://plan/00000000-0000-4000-8000-000000000001',
  },
  {
    id: '00000000-0000-4000-8000-000000000002',
    title: 'Probe',
    summary: null,
    coverUrl: null,
    level: 'none',
    discipline: 'running',
    disciplineLabel: DISCIPLINE_LABELS.running,
    weeksCount: 12,
    daysPerWeek: null,
    estMinutesPerSession: null,
    webUrl: 'https://plans.example.com/plans/00000000-0000-4000-8000-000000000002',
    appUrl: 'probe://plan/00000000-0000-4000-8000-000000000002',
  },
];

/**
 * The page renderer's fingerprint: SHA-256 of {@link PROBE_PLANS}' pages and their content type, so a build's
 * inputs change with the markup, the stylesheet or the escaping, with no version number to remember.
 */
export const PAGE_RENDERER: string = createHash('sha256')
  .update([PAGE_HEADERS.html, ...PROBE_PLANS.map((plan) => renderPlanPage(plan))].join('\n'))
  .digest('hex');
