/**
 * The rows of `catalog check` and their judgement (pure): the black-box cases of gateway/cases.ts, placeholders
 * filled from outside, and the catalog rows only a black-box run makes. The first answers teach the rest, so the
 * rows run in order ({@link checkSteps}).
 */
import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import { comparePlans } from '../builder/catalogs.ts';
import { AppScheme, Catalog, Plan } from '../builder/model.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import { settingRef } from '../contract/errors.ts';
import {
  ANSWER_HEADERS,
  CATALOGS,
  type CatalogName,
  catalogTarget,
  DISCIPLINES,
  type Discipline,
  PATHS,
  perDiscipline,
} from '../contract/index.ts';
import {
  forOrigin,
  forPlan,
  notBlackBox,
  PAGE_PLAN_ID,
  REQUEST_CASES,
  type RequestCase,
} from '../gateway/cases.ts';
import {
  type Answer,
  decodeBody,
  describeDifference,
  judgeAnswer,
  type KnownBody,
  shown,
  variantKey,
} from '../gateway/judge.ts';
import { formatAge } from './age.ts';

/**
 * A row's outcome: a warning does not fail the check; a row not run (the run's deadline came first, or its
 * request carries a key already refused) is never a pass.
 */
export type Verdict = 'pass' | 'fail' | 'skip' | 'warn' | 'not-run';

/** One row of the report; its request with placeholders (`{valid}`) for keys; its lines say why not a pass. */
export interface CheckRow {
  readonly name: string;
  readonly source: 'case' | 'catalog';
  readonly request: string;
  readonly verdict: Verdict;
  readonly lines: readonly string[];
}

/** What a check is told: the deployment, the checker's key (`{valid}`) and one it forged (`{forged}`), and more. */
export interface CheckSettings {
  readonly baseUrl: string;
  readonly key: string;
  readonly forged: string;
  /** The CORS origin the operator set (`null`: none; undefined: not told, CORS is not judged). */
  readonly cors: string | null | undefined;
  /** The age past which a catalog gets a warning. */
  readonly maxAgeMs: number;
  readonly now: Date;
  /**
   * False for a run on a schedule (the canary): the row that sends the valid key in a URL is skipped, since
   * access logs keep URLs and a canary would write its key into them every few minutes.
   */
  readonly keyInUrl?: boolean;
}

/** A request as sent: the target exactly (raw path and query), headers in order. */
export interface CheckRequest {
  readonly method: string;
  readonly target: string;
  readonly headers: readonly (readonly [string, string])[];
}

/** What the answers so far have taught: the bodies, ETags and dates later rows are judged against. */
export interface Learned {
  readonly bodies: Partial<Record<KnownBody, Buffer>>;
  /** ETags and Last-Modified by variant key (`all`, `all.br`, `all.gz`). */
  readonly etags: Map<string, string>;
  readonly modified: Map<string, string>;
  /** A digest of what each compressed variant decodes to, as first served, by variant key (`all.br`). */
  readonly variants: Map<string, string>;
  /** The catalogs parsed, kept while the catalog rows that read them run ({@link forgetParsed}). */
  readonly parsed: Map<CatalogName, ParsedCatalog | string>;
  /** The plan whose page is checked (the catalog's first), or why there is none. */
  pagePlan: { readonly id: string } | { readonly reason: string };
  /** Whether an answer carried the CORS origin given (`Access-Control-Allow-Origin`). */
  corsSeen: boolean;
}

/** What a check knows before its first answer. */
export function newLearned(): Learned {
  return {
    bodies: {},
    etags: new Map(),
    modified: new Map(),
    variants: new Map(),
    parsed: new Map(),
    pagePlan: { reason: 'the whole catalog was not served' },
    corsSeen: false,
  };
}

/** A step of the check: a case of the table, or a catalog row. */
export type Step =
  | { readonly kind: 'case'; readonly testCase: RequestCase }
  | { readonly kind: 'catalog'; readonly row: CatalogRow };

/** A catalog row: judges what earlier answers showed, after the requests it makes itself (if any). */
export interface CatalogRow {
  readonly name: string;
  readonly request: string;
  /** The bodies it judges: skipped when one was not served. */
  readonly needs: readonly (CatalogName | 'openapi')[];
  /** The requests it makes itself, if any. */
  readonly requests?: (settings: CheckSettings) => readonly CheckRequest[];
  judge(settings: CheckSettings, learned: Learned, answers: readonly Answer[]): Judged;
}

type Judged = { readonly verdict: Verdict; readonly lines: readonly string[] };

// Cases.

/** The black-box-checkable cases of the table. */
export function blackBoxCases(): RequestCase[] {
  return REQUEST_CASES.filter((testCase) => notBlackBox(testCase) === undefined);
}

const pagePlanId = (learned: Learned) => ('id' in learned.pagePlan ? learned.pagePlan.id : PAGE_PLAN_ID);

/** The case's request as the report shows it: the deployment's plan, placeholders for keys. */
export function shownRequest(testCase: RequestCase, learned: Learned): string {
  const derived = forPlan(testCase, pagePlanId(learned));
  return `${derived.method} ${derived.target}`;
}

/** A request as a key: two requests with the same key are the same request, and share one answer. */
export function requestKey(request: CheckRequest): string {
  return JSON.stringify([request.method, request.target, request.headers]);
}

const CATALOG_BODIES: readonly string[] = CATALOGS;
const hasHeader = (testCase: RequestCase, name: string) =>
  (testCase.headers ?? []).some(([header]) => header.toLowerCase() === name);

/**
 * The case as the check sends it: a 200 of a catalog whose subject is not the encoding (no `Accept-Encoding` of
 * its own, no `Content-Encoding` judged, not the plain GET that teaches the identity bytes) is fetched in brotli, as a partner fetches, and
 * judged as the brotli variant: what it decodes to against what that variant decoded to before, its validators
 * against that variant's (`{etag:all}` becomes `{etag:all.br}`). What the row judges (the parameter ignored, the
 * header honoured, the whole object served) is the same; only the bytes on the wire are a tenth. Undefined when
 * the case is sent as it is.
 */
export function compressedFetch(testCase: RequestCase): RequestCase | undefined {
  const body = testCase.body;
  if (testCase.status !== 200 || !CATALOG_BODIES.includes(body) || testCase.encoding !== undefined) return;
  // A row about the encoding asks for its own (or for none: the identity bytes are what it judges).
  const aboutEncoding =
    hasHeader(testCase, 'accept-encoding') ||
    (testCase.headersAbsent ?? []).includes('content-encoding') ||
    'content-encoding' in (testCase.headersPresent ?? {});
  if (aboutEncoding || teachers().has(testCase)) return;
  const variant = (text: string) => text.replace(/\{(etag|modified):(all|[a-z]+)\}/g, '{$1:$2.br}');
  return {
    ...testCase,
    headers: [
      ...(testCase.headers ?? []).map(([name, value]) => [name, variant(value)] as const),
      ['Accept-Encoding', 'br'],
    ],
    encoding: 'br',
  };
}

/** A case prepared: what is sent and judged, the request, its template (placeholders unfilled), how fetched. */
export interface PreparedCase {
  readonly testCase: RequestCase;
  readonly request: CheckRequest;
  /**
   * The request before the answers so far filled it in: the same template is the same request within one run
   * ({@link plannedRequests} counts them).
   */
  readonly template: string;
  /** Fetched in brotli by {@link compressedFetch}: judged as that variant. */
  readonly compressed: boolean;
}

/** The case with what the settings decide (the origin, the encoding), or why it is not sent with them. */
function caseForSettings(
  testCase: RequestCase,
  settings: Pick<CheckSettings, 'cors' | 'keyInUrl'>,
): { readonly testCase: RequestCase; readonly compressed: boolean } | { readonly skip: string } {
  let derived = testCase;
  if (settings.keyInUrl === false && testCase.target.includes('{valid}'))
    return { skip: 'not sent on a schedule: its URL would carry the key into the access logs' };
  if (testCase.cors !== undefined) {
    if (settings.cors === undefined)
      return {
        skip: `CORS not checked: give ${settingRef('corsOrigin')} (the origin the operator set, or off)`,
      };
    if (settings.cors === null)
      return { skip: `needs a CORS origin; ${settingRef('corsOrigin')} says CORS is off` };
    derived = forOrigin(derived, settings.cors);
  }
  const compressed = compressedFetch(derived);
  return { testCase: compressed ?? derived, compressed: compressed !== undefined };
}

const templateOf = (testCase: RequestCase) =>
  requestKey({ method: testCase.method, target: testCase.target, headers: testCase.headers ?? [] });

/** The case as this deployment can run it (plan, origin and placeholders filled in), or why it cannot. */
export function prepareCase(
  testCase: RequestCase,
  settings: CheckSettings,
  learned: Learned,
): PreparedCase | { readonly skip: string } {
  const forSettings = caseForSettings(testCase, settings);
  if ('skip' in forSettings) return forSettings;
  let derived = forSettings.testCase;
  const template = templateOf(derived);
  // A case whose answer is the page needs a plan whose page this deployment serves.
  const isPage = testCase.body === 'page' || testCase.object === 'page';
  if ((testCase.status === 200 || testCase.status === 304) && isPage && 'reason' in learned.pagePlan)
    return { skip: `no plan page to check: ${learned.pagePlan.reason}` };
  derived = forPlan(derived, pagePlanId(learned));

  // {valid} and {forged} are the keys; {etag:…} and {modified:…} the validators an earlier answer gave.
  let missing: string | undefined;
  const resolve = (text: string) =>
    text.replace(/\{(etag:|modified:)?([a-z.]+)\}/g, (match, kind: string | undefined, name: string) => {
      if (kind === undefined)
        return name === 'valid' ? settings.key : name === 'forged' ? settings.forged : match;
      const value = (kind === 'etag:' ? learned.etags : learned.modified).get(name);
      if (value === undefined)
        missing ??= `needs the ${kind === 'etag:' ? 'ETag' : 'Last-Modified'} of ${name}, which no earlier answer gave`;
      return value ?? match;
    });
  const target = resolve(derived.target);
  const headers = (derived.headers ?? []).map(([name, value]) => [name, resolve(value)] as const);
  if (missing !== undefined) return { skip: missing };
  return {
    testCase: derived,
    request: { method: derived.method, target, headers },
    template,
    compressed: forSettings.compressed,
  };
}

/** The templates of a catalog row's own requests: its keys as placeholders, as a case's are. */
export function rowTemplates(row: CatalogRow, settings: CheckSettings): string[] {
  const placeholders = { ...settings, key: '{valid}', forged: '{forged}' };
  return (row.requests?.(placeholders) ?? []).map(requestKey);
}

/**
 * Every request a run of these rows (default: all) with these settings may send, by template, with how many rows send it: a request sent by
 * two rows is sent once and its answer shared, and kept no longer than its last row needs it. `rows` is how
 * many requests the rows make in all (what a run without sharing sends).
 */
export function plannedRequests(
  settings: CheckSettings,
  steps: readonly Step[] = checkSteps(),
): {
  readonly uses: ReadonlyMap<string, number>;
  readonly rows: number;
} {
  const uses = new Map<string, number>();
  let rows = 0;
  const count = (template: string) => {
    rows += 1;
    uses.set(template, (uses.get(template) ?? 0) + 1);
  };
  for (const step of steps) {
    if (step.kind === 'catalog') {
      for (const template of rowTemplates(step.row, settings)) count(template);
      continue;
    }
    const forSettings = caseForSettings(step.testCase, settings);
    if (!('skip' in forSettings)) count(templateOf(forSettings.testCase));
  }
  return { uses, rows };
}

/** Every object the check learns, in the order it learns them. */
const KNOWN_BODIES: readonly KnownBody[] = [...CATALOGS, 'openapi', 'page', 'notFoundPage'];

/** The digest of a body, to tell one variant's decoded bytes from another's without keeping them. */
const digestOf = (body: Buffer) => createHash('sha256').update(body).digest('hex');

/** Remembers a compressed variant's validators and what it decodes to, as first served (a 200 of it). */
function learnVariant(learned: Learned, key: string, answer: Answer, decoded: Buffer): void {
  const { etag, 'last-modified': lastModified } = answer.headers;
  if (etag !== undefined && !learned.etags.has(key)) learned.etags.set(key, etag);
  if (lastModified !== undefined && !learned.modified.has(key)) learned.modified.set(key, lastModified);
  if (!learned.variants.has(key)) learned.variants.set(key, digestOf(decoded));
}

/**
 * Judges a case's answer; an expected status teaches each object's first body and its variants' validators. A
 * case fetched compressed ({@link compressedFetch}) is judged against what its variant decoded to before, when
 * known: a variant whose bytes differ from identity fails the rows about the encodings, not every row that
 * fetched it.
 */
export function judgeCase(
  testCase: RequestCase,
  answer: Answer,
  settings: CheckSettings,
  learned: Learned,
  compressed = false,
) {
  const body = KNOWN_BODIES.find((known) => known === testCase.body);
  let bodies = learned.bodies;
  if (compressed && body !== undefined && answer.status === testCase.status) {
    const digest = learned.variants.get(variantKey(body as CatalogName, testCase.encoding));
    let decoded: Buffer | undefined;
    try {
      decoded = decodeBody(answer);
    } catch {
      // the judge says why
    }
    // The same bytes as its variant served before: the body is that variant's, whatever identity holds.
    if (digest !== undefined && decoded !== undefined && digestOf(decoded) === digest)
      bodies = Object.fromEntries(Object.entries(learned.bodies).filter(([name]) => name !== body));
  }
  const problems = judgeAnswer(testCase, answer, {
    bodies,
    etag: (object, encoding) => learned.etags.get(variantKey(object, encoding)),
    modified: (object, encoding) => learned.modified.get(variantKey(object, encoding)),
    secrets: [settings.key, settings.forged],
    cors: settings.cors,
  });
  if (settings.cors && answer.headers['access-control-allow-origin'] === settings.cors)
    learned.corsSeen = true;
  if (answer.status !== testCase.status || body === undefined) return problems;
  if (learned.bodies[body] === undefined) {
    try {
      learned.bodies[body] = decodeBody(answer);
    } catch {
      // an answer that cannot be decoded teaches nothing (the judge said why)
    }
  }
  if (testCase.status === 200 && body !== 'notFoundPage') {
    const key = variantKey(body, testCase.encoding);
    const { etag, 'last-modified': lastModified } = answer.headers;
    if (etag !== undefined && !learned.etags.has(key)) learned.etags.set(key, etag);
    if (lastModified !== undefined && !learned.modified.has(key)) learned.modified.set(key, lastModified);
  }
  return problems;
}

// Catalog rows.

const BODY_NAMES: Readonly<Record<CatalogName | 'openapi', string>> = {
  all: 'the whole catalog',
  ...perDiscipline((discipline) => `${discipline} plans`),
  openapi: 'openapi.yaml',
};
/** Why a row is skipped: a body it judges was not served. */
export const notServed = (body: CatalogName | 'openapi') =>
  `${BODY_NAMES[body]} was not served (see its row)`;

/** At most this many lines per row: the first failures say enough. */
const MAX_LINES = 5;
const outcome = (lines: readonly string[]): Judged => ({
  verdict: lines.length === 0 ? 'pass' : 'fail',
  lines:
    lines.length > MAX_LINES
      ? [...lines.slice(0, MAX_LINES), `… and ${lines.length - MAX_LINES} more`]
      : lines,
});

interface ParsedCatalog {
  readonly generatedAt: unknown;
  readonly plans: readonly Record<string, unknown>[];
}

/** A catalog body as JSON, or why it is not one; parsed once while its rows run ({@link forgetParsed}). */
function parsedCatalog(learned: Learned, name: CatalogName): ParsedCatalog | string {
  const known = learned.parsed.get(name);
  if (known !== undefined) return known;
  const parsed = parseCatalog(learned, name);
  learned.parsed.set(name, parsed);
  return parsed;
}

function parseCatalog(learned: Learned, name: CatalogName): ParsedCatalog | string {
  const body = learned.bodies[name];
  if (body === undefined) return notServed(name);
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (error) {
    return `${BODY_NAMES[name]} is not JSON (${(error as Error).message})`;
  }
  if (!Array.isArray((value as Partial<ParsedCatalog> | null)?.plans))
    return `${BODY_NAMES[name]} is not an object with a plans array`;
  return value as ParsedCatalog;
}

/**
 * Drops the parsed catalogs: a run calls it once the catalog rows that follow a case are judged, so a large
 * catalog is parsed once per group of rows, and held only while they run.
 */
export function forgetParsed(learned: Learned): void {
  learned.parsed.clear();
}

/** A row judging the whole catalog's body. */
function catalogRow(
  name: string,
  judge: (catalog: ParsedCatalog, settings: CheckSettings) => readonly string[],
): CatalogRow {
  return {
    name,
    request: `GET ${PATHS.plans}`,
    needs: ['all'],
    judge: (settings, learned) => {
      const catalog = parsedCatalog(learned, 'all');
      return outcome(typeof catalog === 'string' ? [catalog] : judge(catalog, settings));
    },
  };
}

/** A plan as a line names it. */
const planLabel = (plans: readonly Record<string, unknown>[], index: number) => {
  const plan = plans[index] ?? {};
  return `plans[${index}] (${String(plan.discipline)}, ${shown(String(plan.title))}, ${String(plan.id)})`;
};

const PLAN_FIELDS = Object.keys(Plan.shape).join(',');

const schemaRow = catalogRow(
  "the whole catalog: openapi.yaml's Catalog schema, the documented fields",
  (catalog) => {
    const lines = (Catalog.safeParse(catalog).error?.issues ?? []).map(
      (issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`,
    );
    const top = Object.keys(catalog).join(',');
    if (top !== 'generatedAt,plans') lines.push(`fields: expected generatedAt,plans, got ${top}`);
    catalog.plans.forEach((plan, index) => {
      const fields = Object.keys(plan ?? {}).join(',');
      if (fields !== PLAN_FIELDS)
        lines.push(`plans[${index}] fields: expected ${PLAN_FIELDS}, got ${fields}`);
    });
    return lines;
  },
);

const orderRow = catalogRow('the whole catalog: ordered by discipline, then title, then id', (catalog) => {
  const lines: string[] = [];
  const plans = catalog.plans;
  for (let i = 1; i < plans.length; i += 1) {
    const order = comparePlans(plans[i - 1] as Plan, plans[i] as Plan);
    if (order > 0) lines.push(`${planLabel(plans, i - 1)} comes before ${planLabel(plans, i)}`);
    if (order === 0) lines.push(`${planLabel(plans, i)}: the same plan twice`);
  }
  return lines;
});

const linksRow = catalogRow('the whole catalog: webUrl and appUrl of the documented shape', (catalog) => {
  const lines: string[] = [];
  const bases = new Set<string>();
  const schemes = new Set<string>();
  catalog.plans.forEach((plan, index) => {
    const id = String(plan.id);
    const webUrl = String(plan.webUrl);
    const suffix = `/plans/${id}`;
    const base = webUrl.endsWith(suffix) ? webUrl.slice(0, -suffix.length) : undefined;
    if (base === undefined || !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(base))
      lines.push(`plans[${index}].webUrl: expected http(s)://…/plans/${id}, got ${shown(webUrl)}`);
    else bases.add(base);
    const appUrl = String(plan.appUrl);
    const match = /^([^:]+):\/\/plan\/(.*)$/.exec(appUrl);
    if (!match || match[2] !== id || !AppScheme.safeParse(match[1]).success)
      lines.push(`plans[${index}].appUrl: expected {scheme}://plan/${id}, got ${shown(appUrl)}`);
    else schemes.add(match[1] as string);
  });
  if (bases.size > 1) lines.push(`webUrl: one base for every plan, got ${[...bases].join(', ')}`);
  if (schemes.size > 1) lines.push(`appUrl: one scheme for every plan, got ${[...schemes].join(', ')}`);
  return lines;
});

/** ISO 8601 UTC with milliseconds, as the builder stamps it. */
const GENERATED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A generatedAt this far ahead of the checker's clock is in the future, not clock skew. */
const CLOCK_SKEW_MS = 5 * 60_000;

const generatedAtRow = catalogRow(
  'the whole catalog: generatedAt an ISO 8601 UTC time, not ahead',
  (catalog, settings) => {
    const value = catalog.generatedAt;
    const time = typeof value === 'string' && GENERATED_AT.test(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(time))
      return [`generatedAt: expected an ISO 8601 UTC time with milliseconds, got ${shown(String(value))}`];
    if (time > settings.now.getTime() + CLOCK_SKEW_MS)
      return [
        `generatedAt: ${value} is in the future (this machine's clock says ${settings.now.toISOString()})`,
      ];
    return [];
  },
);

const freshnessRow: CatalogRow = {
  name: `the whole catalog: generatedAt within ${settingRef('maxAge')} (else a warning)`,
  request: `GET ${PATHS.plans}`,
  needs: ['all'],
  judge: (settings, learned) => {
    const catalog = parsedCatalog(learned, 'all');
    const time = typeof catalog === 'string' ? Number.NaN : Date.parse(String(catalog.generatedAt));
    if (typeof catalog === 'string' || Number.isNaN(time))
      return { verdict: 'skip', lines: ['no generatedAt to judge (see the row above)'] };
    const ageMs = settings.now.getTime() - time;
    if (ageMs <= settings.maxAgeMs) return { verdict: 'pass', lines: [] };
    const age = formatAge(Math.max(0, Math.round(ageMs / 1000)));
    const line = `generatedAt ${String(catalog.generatedAt)} is ${age} old, more than ${settingRef('maxAge')} ${formatAge(settings.maxAgeMs / 1000)}: run catalog status where the builds are`;
    return { verdict: 'warn', lines: [line] };
  },
};

/** A discipline's catalog: exactly the whole catalog's plans of that discipline, in its order. */
function subsetRow(discipline: Discipline): CatalogRow {
  return {
    name: `${BODY_NAMES[discipline]}: exactly the whole catalog's ${discipline} plans, in order`,
    request: `GET ${catalogTarget(discipline)}`,
    needs: ['all', discipline],
    judge: (_settings, learned) => {
      const all = parsedCatalog(learned, 'all');
      const part = parsedCatalog(learned, discipline);
      if (typeof all === 'string') return outcome([all]);
      if (typeof part === 'string') return outcome([part]);
      const lines: string[] = [];
      if (part.generatedAt !== all.generatedAt)
        lines.push(
          `generatedAt: expected ${shown(String(all.generatedAt))}, got ${shown(String(part.generatedAt))}`,
        );
      const expected = all.plans.filter((plan) => plan.discipline === discipline);
      if (part.plans.length !== expected.length)
        lines.push(`plans: expected ${expected.length}, got ${part.plans.length}`);
      const index = expected.findIndex(
        (plan, i) => JSON.stringify(plan) !== JSON.stringify(part.plans[i] ?? null),
      );
      if (index !== -1)
        lines.push(
          `plans[${index}]: expected ${String(expected[index]?.id)} (${shown(String(expected[index]?.title))}), got ${part.plans[index] ? `${String(part.plans[index]?.id)} (${shown(String(part.plans[index]?.title))})` : 'none'}${part.plans[index]?.id === expected[index]?.id ? ' with other fields' : ''}`,
        );
      return outcome(lines);
    },
  };
}

/** Every catalog in each encoding, in the order the decode row requests them. */
const ENCODED = CATALOGS.flatMap((name) => (['gzip', 'br'] as const).map((encoding) => ({ name, encoding })));

const decodeRow: CatalogRow = {
  name: 'every catalog: gzip and br decode to the identity bytes',
  request: `GET ${PATHS.plans}[?discipline=…] with Accept-Encoding gzip, br`,
  needs: CATALOGS,
  requests: (settings) =>
    ENCODED.map(({ name, encoding }) => ({
      method: 'GET',
      target: catalogTarget(name),
      headers: [
        ['X-Api-Key', settings.key],
        ['Accept-Encoding', encoding],
      ],
    })),
  judge: (_settings, learned, answers) => {
    const lines: string[] = [];
    for (const [index, { name, encoding }] of ENCODED.entries()) {
      const answer = answers[index];
      const label = `${BODY_NAMES[name]} in ${encoding}`;
      const identity = learned.bodies[name];
      if (!answer || !identity) continue;
      if (answer.status !== 200) {
        lines.push(`${label}: expected 200, got ${answer.status}`);
        continue;
      }
      const sent = answer.headers['content-encoding'];
      if (sent !== encoding)
        lines.push(`${label}: Content-Encoding expected ${shown(encoding)}, got ${shown(sent)}`);
      let decoded: Buffer;
      try {
        decoded = decodeBody(answer);
      } catch (error) {
        lines.push(`${label}: cannot be decoded (${(error as Error).message})`);
        continue;
      }
      if (sent === encoding) learnVariant(learned, variantKey(name, encoding), answer, decoded);
      if (!decoded.equals(identity))
        lines.push(
          `${label}: decodes to other bytes than identity (${describeDifference(decoded, identity)})`,
        );
    }
    return outcome(lines);
  },
};

/** The operations (lowercase methods) of each path of an OpenAPI document. */
function operationsOf(document: unknown): Map<string, string[]> {
  const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
  const paths = (document as { paths?: Record<string, Record<string, unknown>> } | null)?.paths ?? {};
  return new Map(
    Object.entries(paths).map(([path, item]) => [path, methods.filter((m) => item && m in item)]),
  );
}

/** The contract's operations: those of the openapi.yaml this version of the service ships. */
const CONTRACT_OPERATIONS = operationsOf(parse(OPENAPI_TEMPLATE, { maxAliasCount: -1 }));

const openapiRow: CatalogRow = {
  name: "openapi.yaml: OpenAPI 3.1 with exactly the contract's operations",
  request: `GET ${PATHS.openapi}`,
  needs: ['openapi'],
  judge: (_settings, learned) => {
    const text = (learned.bodies.openapi as Buffer).toString('utf8');
    // The verdict depends on the text alone: a run against an unchanged deployment (the canary's every run)
    // parses nothing again.
    if (lastOpenapi?.text !== text) lastOpenapi = { text, lines: openapiLines(text) };
    return outcome(lastOpenapi.lines);
  },
};

/** The last openapi.yaml judged, and what was found wrong with it. */
let lastOpenapi: { readonly text: string; readonly lines: readonly string[] } | undefined;

/** What is wrong with a served openapi.yaml: not YAML, not 3.1, or operations other than the contract's. */
function openapiLines(text: string): string[] {
  let document: unknown;
  try {
    document = parse(text, { maxAliasCount: -1 });
  } catch (error) {
    return [`not YAML: ${(error as Error).message.split('\n')[0]}`];
  }
  const lines: string[] = [];
  const version = (document as { openapi?: unknown } | null)?.openapi;
  if (typeof version !== 'string' || !version.startsWith('3.1'))
    lines.push(`openapi: expected 3.1.x, got ${shown(String(version))}`);
  const served = operationsOf(document);
  for (const [path, expected] of CONTRACT_OPERATIONS) {
    const got = served.get(path);
    if (got === undefined) lines.push(`paths: ${path} is missing`);
    else if (got.join(',') !== expected.join(','))
      lines.push(`paths.${path}: expected ${expected.join(', ')}, got ${got.join(', ') || 'none'}`);
  }
  for (const path of served.keys())
    if (!CONTRACT_OPERATIONS.has(path)) lines.push(`paths: ${path} is not the contract's`);
  return lines;
}

/** The catalog rows, by the case they follow (the case whose answer they judge). */
const CATALOG_ROWS: Readonly<Record<CatalogName | 'openapi', readonly CatalogRow[]>> = {
  all: [schemaRow, orderRow, linksRow, generatedAtRow, freshnessRow],
  // Once every catalog is known: its encodings.
  ...perDiscipline((d) => (d === DISCIPLINES.at(-1) ? [subsetRow(d), decodeRow] : [subsetRow(d)])),
  openapi: [openapiRow],
};

/** The case that first teaches an object's body: the plain GET serving it (the key its only header). */
function teaches({ method, body: served, headers = [], encoding, cors }: RequestCase, body: KnownBody) {
  const plain = headers.every(([name, value]) => name === 'X-Api-Key' && value === '{valid}');
  return method === 'GET' && served === body && plain && encoding === undefined && cors === undefined;
}

/** The case that teaches each body: the first plain GET of it in the table. */
function teacherOf(candidates: readonly RequestCase[], body: KnownBody): RequestCase {
  const teacher = candidates.find((testCase) => teaches(testCase, body));
  if (teacher === undefined) throw new Error(`the request-case table has no plain GET of ${body}`);
  return teacher;
}

let teacherCases: ReadonlySet<RequestCase> | undefined;
/** The cases that teach the bodies (the identity bytes the other rows are judged against). */
function teachers(): ReadonlySet<RequestCase> {
  teacherCases ??= new Set(KNOWN_BODIES.map((body) => teacherOf(blackBoxCases(), body)));
  return teacherCases;
}

/** Every step in order: each case that teaches a body, followed by its catalog rows; then the other cases. */
export function checkSteps(): Step[] {
  const candidates = blackBoxCases();
  const steps: Step[] = [];
  const taken = new Set<RequestCase>();
  for (const body of KNOWN_BODIES) {
    const teacher = teacherOf(candidates, body);
    taken.add(teacher);
    steps.push({ kind: 'case', testCase: teacher });
    for (const row of CATALOG_ROWS[body as keyof typeof CATALOG_ROWS] ?? [])
      steps.push({ kind: 'catalog', row });
  }
  for (const testCase of candidates) if (!taken.has(testCase)) steps.push({ kind: 'case', testCase });
  return steps;
}

/**
 * The steps a partner runs with nothing but the service's address and their own key (the partner kit's
 * `catalog-check`), in order: not the CORS cases (they need the origin the operator set), not the catalog's age
 * (the operator's schedule; partners are told `generatedAt` is no freshness signal), not the case that sends the
 * key in a URL (it would write the partner's key into the service's access logs).
 */
export function partnerSteps(): Step[] {
  return checkSteps().filter((step) =>
    step.kind === 'catalog'
      ? step.row !== freshnessRow
      : step.testCase.cors === undefined && !step.testCase.target.includes('{valid}'),
  );
}

/** Learns the plan whose page is checked: the catalog's first, when its `webUrl` is this deployment's. */
export function learnPagePlan(settings: CheckSettings, learned: Learned): void {
  const catalog = parsedCatalog(learned, 'all');
  const first = typeof catalog === 'string' ? undefined : catalog.plans[0];
  const id = String(first?.id).toLowerCase();
  const webUrl = String(first?.webUrl);
  if (typeof catalog === 'string') learned.pagePlan = { reason: catalog };
  else if (first === undefined) learned.pagePlan = { reason: 'the catalog has no plans' };
  else if (webUrl === `${settings.baseUrl}/plans/${id}` && /^[0-9a-f-]{36}$/.test(id))
    learned.pagePlan = { id };
  else
    learned.pagePlan = {
      reason: `the first plan's webUrl ${webUrl} is not ${settings.baseUrl}/plans/<id> (pages on a website elsewhere, or a catalog built for another address)`,
    };
}

// The probe: the few rows that show partners are served right now, fetched as a good partner fetches.

/** What a probe keeps of a catalog it read, for the next probe: its brotli variant's ETag and `generatedAt`. */
export interface Seen {
  readonly etag: string;
  readonly generatedAt: string;
}
/** What the last probe saw, by discipline. */
export type ProbeSeen = Readonly<Partial<Record<Discipline, Seen>>>;

const namedCase = (name: string): RequestCase => {
  const found = REQUEST_CASES.find((testCase) => testCase.name === name);
  if (!found) throw new Error(`the request-case table has no case "${name}"`);
  return found;
};

/** A discipline's catalog in brotli, as the probe reads it: the table's plain GET of it, fetched compressed. */
export function probeReadCase(discipline: Discipline): RequestCase {
  const plain = teacherOf(blackBoxCases(), discipline);
  const compressed = compressedFetch({ ...plain, name: `${plain.name} (the probe's read)` });
  if (compressed === undefined) throw new Error(`the probe cannot read ${discipline} in brotli`);
  return {
    ...compressed,
    name: `${discipline} plans in brotli, 304 while unchanged`,
    headersPresent: { ...ANSWER_HEADERS.catalog, 'content-encoding': 'br' },
  };
}

/** The same read answered 304: the variant named by the ETag sent is current. */
function notModifiedCase(read: RequestCase, discipline: Discipline): RequestCase {
  return {
    ...read,
    status: 304,
    body: 'empty',
    object: discipline,
    headersPresent: {
      'cache-control': ANSWER_HEADERS.catalog['cache-control'],
      vary: ANSWER_HEADERS.catalog.vary,
    },
    headersAbsent: ['content-encoding', 'content-type'],
  };
}

/** The probe's read of a discipline: conditional on the ETag the last probe saw, when it saw one. */
export function probeRequest(discipline: Discipline, settings: CheckSettings, seen: ProbeSeen): CheckRequest {
  const read = probeReadCase(discipline);
  const previous = seen[discipline];
  const headers = (read.headers ?? []).map(
    ([name, value]) => [name, value === '{valid}' ? settings.key : value] as const,
  );
  return {
    method: read.method,
    target: read.target,
    headers: previous ? [...headers, ['If-None-Match', previous.etag] as const] : headers,
  };
}

/** What a probe read showed: the row's problems, what to keep for the next probe, whether the catalog changed. */
export interface ProbeReadJudgement {
  readonly lines: readonly string[];
  readonly seen: Seen | undefined;
  /** A 200 with another ETag than the one the last probe saw: the live build changed in between. */
  readonly changed: boolean;
}

/** The ISO 8601 UTC time the builder stamps; the probe reads it from the head of the body only. */
const GENERATED_AT_HEAD = /^\{"generatedAt":"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)","plans":\[/;

/**
 * Judges a probe read: a 304 as the table's 304 of a variant (the ETag it named is current); a 200 as the
 * table's 200 of the brotli variant, its body a catalog of that discipline's plans, never a 200 that repeats the
 * ETag it was asked about (a conditional request ignored); anything else as the 200 it should have been.
 */
export function judgeProbeRead(
  discipline: Discipline,
  answer: Answer,
  settings: CheckSettings,
  previous: Seen | undefined,
): ProbeReadJudgement {
  const read = probeReadCase(discipline);
  const known = {
    bodies: {},
    etag: () => undefined,
    modified: () => undefined,
    secrets: [settings.key, settings.forged],
    cors: settings.cors,
  };
  if (answer.status === 304 && previous !== undefined)
    return {
      lines: judgeAnswer(notModifiedCase(read, discipline), answer, known),
      seen: previous,
      changed: false,
    };
  const lines = judgeAnswer(read, answer, known);
  if (answer.status !== 200) return { lines, seen: previous, changed: false };
  const etag = answer.headers.etag;
  if (previous !== undefined && etag === previous.etag)
    lines.unshift(`status: expected 304 (If-None-Match named the current ETag ${etag}), got 200`);
  let generatedAt: string | undefined;
  try {
    const text = decodeBody(answer).toString('utf8');
    generatedAt = GENERATED_AT_HEAD.exec(text)?.[1];
    const catalog = JSON.parse(text) as Partial<ParsedCatalog>;
    if (generatedAt === undefined || !Array.isArray(catalog.plans))
      lines.push(
        `body: expected {"generatedAt":"<ISO 8601 UTC>","plans":[…]}, got ${shown(text.slice(0, 60))}`,
      );
    const other = (catalog.plans ?? []).findIndex((plan) => plan?.discipline !== discipline);
    if (other !== -1)
      lines.push(
        `plans[${other}]: expected discipline ${discipline}, got ${shown(String(catalog.plans?.[other]?.discipline))}`,
      );
  } catch (error) {
    lines.push(`body: not a catalog (${(error as Error).message.split('\n')[0]})`);
  }
  const seen = etag !== undefined && generatedAt !== undefined ? { etag, generatedAt } : previous;
  return { lines: [...new Set(lines)], seen, changed: previous !== undefined && etag !== previous.etag };
}

/** The probe's freshness row: the catalogs' `generatedAt`, as read now or confirmed unchanged by a 304. */
export const PROBE_FRESHNESS = `the live catalogs: generatedAt within ${settingRef('maxAge')} (else a warning)`;

/** Judges the probe's freshness: the oldest `generatedAt` seen against `maxAge`. */
export function judgeProbeFreshness(seen: ProbeSeen, settings: CheckSettings): Judged {
  const times = DISCIPLINES.flatMap((discipline) => {
    const generatedAt = seen[discipline]?.generatedAt;
    return generatedAt === undefined ? [] : [generatedAt];
  });
  if (times.length === 0) return { verdict: 'skip', lines: ['no catalog was read (see the rows above)'] };
  const oldest = times.reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b));
  const ageMs = settings.now.getTime() - Date.parse(oldest);
  if (ageMs <= settings.maxAgeMs) return { verdict: 'pass', lines: [] };
  const age = formatAge(Math.max(0, Math.round(ageMs / 1000)));
  return {
    verdict: 'warn',
    lines: [
      `generatedAt ${oldest} is ${age} old, more than ${settingRef('maxAge')} ${formatAge(settings.maxAgeMs / 1000)}: run catalog status where the builds are`,
    ],
  };
}

/** The table's cases the probe runs as they are: one refused key, and the CORS preflight (with an origin set). */
export const PROBE_CASES: readonly RequestCase[] = [
  namedCase('a forged key with the right shape'),
  namedCase('OPTIONS preflight with CORS'),
];

/** The probe's rows: a read per discipline, their freshness, and {@link PROBE_CASES}. */
export function probeRowCount(): number {
  return DISCIPLINES.length + 1 + PROBE_CASES.length;
}

// The report.

/** The whole check, its rows and their counts. */
export interface CheckReport {
  readonly baseUrl: string;
  readonly checkedAt: string;
  /** What the CORS rows were judged against: the origin given, `off`, or `unchecked`. */
  readonly cors: string;
  /** The plan whose page was checked, or why none was. */
  readonly pagePlan: string;
  readonly reachable: boolean;
  /** The first request's key was refused (401). */
  readonly keyRefused: boolean;
  readonly corsCause: string | null;
  readonly rows: readonly CheckRow[];
  readonly counts: Readonly<Record<Verdict, number>>;
  /** How long the run took. */
  readonly durationMs: number;
  /** The deadline of the whole run, and whether it came before every row was run. */
  readonly deadline: { readonly ms: number; readonly reached: boolean };
  /** The requests sent: one per distinct request (rows that judge the same request share its answer). */
  readonly requests: number;
  /** 0 every row passed (warnings allowed), 1 a row failed or was not run, 2 the service could not be reached. */
  readonly exitCode: 0 | 1 | 2;
}

/**
 * The likely cause when every row failing on `Access-Control-Allow-Origin` got the same value and no answer
 * carried the origin given (the deployment's origin is another, or none); else null.
 */
export function corsCause(
  cors: string | null | undefined,
  rows: readonly CheckRow[],
  learned: Pick<Learned, 'corsSeen'>,
): string | null {
  const prefix = 'access-control-allow-origin: ';
  const lines = rows.flatMap((row) => row.lines.filter((line) => line.startsWith(prefix)));
  const got = /, got (.+)$/.exec(lines[0] ?? '')?.[1];
  if (cors === undefined || learned.corsSeen || got === undefined || lines.some((line) => line !== lines[0]))
    return null;
  return `${got === 'none' ? 'the deployment has no CORS origin set' : `the deployment's CORS origin is ${got}`}, while ${settingRef('corsOrigin')} says ${cors ?? 'off'} (every one of the ${lines.length} rows failing on Access-Control-Allow-Origin got ${got}): catalog cors show where its keys are says which is meant; a change takes about a minute to reach the edge`;
}

/** The report as text: one line per row (with its problems indented below), then the summary. */
export function formatCheckReport(report: CheckReport): string {
  const width = Math.min(72, Math.max(4, ...report.rows.map((row) => row.name.length)));
  const lines: string[] = [];
  for (const row of report.rows) {
    const name = row.name.length > width ? `${row.name.slice(0, width - 1)}…` : row.name.padEnd(width);
    const label = row.verdict === 'not-run' ? 'NOT RUN' : row.verdict.toUpperCase().padEnd(4);
    const head = `${label}  ${name}  ${row.request}`;
    if ((row.verdict === 'skip' || row.verdict === 'not-run') && row.lines.length === 1)
      lines.push(`${head}  (${row.lines[0]})`);
    else lines.push(head, ...row.lines.map((line) => `      ${line}`));
  }
  const { pass, fail, skip, warn, 'not-run': notRun } = report.counts;
  const unrun =
    notRun === 0
      ? ''
      : `, ${notRun} not run${report.deadline.reached ? ` (${settingRef('checkDeadline')} ${formatAge(report.deadline.ms / 1000)} passed)` : ''}`;
  lines.push(
    '',
    `${report.baseUrl}: ${pass} passed, ${fail} failed, ${skip} skipped, ${warn} warning${warn === 1 ? '' : 's'} of ${report.rows.length} rows${unrun}, in ${(report.durationMs / 1000).toFixed(1)} s`,
    `CORS: ${report.cors === 'unchecked' ? `not checked (give ${settingRef('corsOrigin')})` : report.cors}; plan pages: ${report.pagePlan}`,
  );
  if (report.corsCause) lines.push(`likely cause of the CORS failures: ${report.corsCause}`);
  if (report.keyRefused)
    lines.push(
      `${settingRef('checkKey')} was refused (401): it is not a current key of this deployment (revoked, expired, or issued elsewhere)`,
    );
  return `${lines.join('\n')}\n`;
}

/** Every text of the report with the keys replaced by their placeholders (a service may echo one). */
export function withoutKeys<T>(value: T, { key, forged }: Pick<CheckSettings, 'key' | 'forged'>): T {
  return JSON.parse(JSON.stringify(value).replaceAll(key, '{valid}').replaceAll(forged, '{forged}')) as T;
}
