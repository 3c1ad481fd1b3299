/**
 * `catalog status` (docs/decisions.md#operations): the facts are read once ({@link readStatusFacts}) and judged
 * by a pure function ({@link evaluateStatus}): healthy, degraded or broken, with a reason for each finding.
 */
import { hostname } from 'node:os';
import type { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { z } from 'zod';
import { REDACTED } from '../builder/sources/redact.ts';
import { describeCause, StoreError, settingRef } from '../contract/errors.ts';
import {
  CANARY_BEATS,
  type CanaryBeat,
  DISCIPLINES,
  KVS_CORS_ORIGIN,
  perDiscipline,
  STATE_CANARY,
  STATE_LAST_RUN,
} from '../contract/index.ts';
import { listKeys } from '../keys/rules.ts';
import type { LiveCatalog } from '../publish/core.ts';
import { describeHolder, type LockHolder, RunLockRecord, readLock } from '../publish/lock.ts';
import { pointerOf, shownValue } from '../publish/pointer.ts';
import type { PublishTarget } from '../publish/steps.ts';
import { formatAge } from './age.ts';
import { CanaryReport, judgeConformance, parseCanaryReport } from './canary.ts';
import { failureOf, LastRun, parseLastRun } from './last-run.ts';

/** Keys expiring within this long are listed. */
export const KEY_EXPIRY_WARNING_MS = 7 * 86_400_000;

/** How many damaged objects a reason names (the report lists them all). */
const NAMED_DAMAGE = 3;

/**
 * What status reads: every entry of the store, the live catalog, the last run's record, the run lock, the canary's
 * last report.
 */
export interface StatusFacts {
  /** How the origin and the store are named (`s3://bucket`, a path, the KVS ARN). */
  readonly origin: string;
  readonly store: string;
  readonly entries: ReadonlyMap<string, string>;
  /** Why the store and the origin are not one deployment (publish/steps.ts `proveDeployment`), or null. */
  readonly deployment: string | null;
  readonly live: LiveCatalog;
  /** The last run's record, why it could not be read, or null when there is none. */
  readonly lastRun: { readonly record: LastRun } | { readonly problem: string } | null;
  /** `gone`: the lock's holder is a process of this host that has exited. */
  readonly runLock: { readonly holder: LockHolder; readonly gone: boolean } | null;
  /**
   * The canary's last report of each beat (`stopped`: a local canary whose `catalog start` has exited, or a
   * deployment that no longer has a canary), why it could not be read, or null when there is none.
   */
  readonly canary?: Readonly<Partial<Record<CanaryBeat, CanaryFact | null>>>;
  /** The deployment's functions: whether LIVE runs DEVELOPMENT's code; absent when not asked. */
  readonly functions?: readonly FunctionStagesFact[];
}

/** One function's stages as status reads them: compared, or why they could not be read. */
export type FunctionStagesFact = {
  readonly name: string;
  readonly kind: string;
} & ({ readonly stages: 'same' | 'differs' | 'unpublished' } | { readonly problem: string });

/** What status read of one beat's report. */
export type CanaryFact =
  | { readonly report: CanaryReport; readonly stopped: boolean }
  | { readonly problem: string };

/** One beat's last report, judged. */
const ConformanceBeat = z.object({
  /** The line status shows: `146 of 147 rows pass, failing: "…", 3m ago`, or why the report cannot be read. */
  line: z.string(),
  /** Seconds since the run finished (null: the report cannot be read). */
  ageSeconds: z.number().nullable(),
  /** No report of this beat for two of its periods. */
  silent: z.boolean(),
  /** A local canary whose catalog start stopped, or a deployment without a canary now: shown, not judged. */
  stopped: z.boolean(),
  report: CanaryReport.nullable(),
  /** Why the report could not be read (null: it was). */
  problem: z.string().nullable(),
});

const Counts = z.record(z.enum(DISCIPLINES), z.number().int());

/** The report `catalog status --json` prints. */
export const StatusReport = z.object({
  command: z.literal('status'),
  checkedAt: z.iso.datetime(),
  /** `healthy` (exit 0), `degraded` (exit 1) or `broken` (exit 2): the worst finding. */
  health: z.enum(['healthy', 'degraded', 'broken']),
  exitCode: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  /** Every finding that is not healthy, worst first, each in one line. */
  problems: z.array(z.object({ level: z.enum(['degraded', 'broken']), message: z.string() })),
  origin: z.string(),
  store: z.string(),
  live: z.object({
    /** `unreadable`: build:live names nothing the edge can serve. */
    state: z.enum(['build', 'unreadable', 'none']),
    buildId: z.string().nullable(),
    generatedAt: z.string().nullable(),
    /** Seconds since `generatedAt`. */
    ageSeconds: z.number().nullable(),
    /** The later of `generatedAt` and the last run that found the source identical to this build. */
    confirmedAt: z.string().nullable(),
    /** Seconds since `confirmedAt`: what `maxAge` is compared with. */
    confirmedAgeSeconds: z.number().nullable(),
    counts: Counts.nullable(),
    plans: z.number().int().nullable(),
    /** The live build's objects and the bytes of its pages against its manifest: how many, and what is wrong. */
    objects: z.object({ expected: z.number().int(), damaged: z.array(z.string()) }).nullable(),
    /** The live pages against the build's: how many it has, and each one missing, other, or of no plan of it. */
    pages: z.object({ expected: z.number().int(), damaged: z.array(z.string()) }).nullable(),
  }),
  /** The pin a rollback set (publishing moves nothing while it is there); an unreadable pin counts as one. */
  pin: z.object({ build: z.string(), at: z.string(), by: z.string(), reason: z.string() }).nullable(),
  lastRun: LastRun.nullable(),
  /** Why the last run's record could not be read. */
  lastRunProblem: z.string().nullable(),
  /** A run in progress, or one that never finished (lock expired or process gone, no record): failed. */
  runLock: RunLockRecord.omit({ run: true })
    .extend({ state: z.enum(['running', 'abandoned']) })
    .nullable(),
  keys: z.object({
    /** Usable (unexpired) keys per partner; a partner whose keys all expired shows 0. */
    partners: z.array(z.object({ partner: z.string(), keys: z.number().int() })),
    /** Keys expiring within `keyExpiryWarningSeconds`. */
    expiringSoon: z.array(z.object({ partner: z.string(), id: z.string(), expires: z.string() })),
    /** Stored key records that cannot be read (the gateway refuses those keys). */
    invalid: z.number().int(),
  }),
  cors: z.object({ origin: z.string().nullable() }),
  /**
   * The canary's last report of each beat (the probe, the full table), judged: the line status shows, its age,
   * whether that beat is silent (no report for two of its periods) or stopped, the report; null: none yet.
   */
  conformance: z.object({ probe: ConformanceBeat.nullable(), full: ConformanceBeat.nullable() }),
  /**
   * The deployment's functions (with `--deployment`, or their names given): `differs` when LIVE runs something
   * else than DEVELOPMENT (a deploy with publishFunctions false put it there), `unpublished` without LIVE; or why
   * they could not be read. Not a health finding: a held release is the operator's choice.
   */
  functions: z
    .array(
      z.object({
        name: z.string(),
        kind: z.string(),
        stages: z.enum(['same', 'differs', 'unpublished']).nullable(),
        problem: z.string().nullable(),
      }),
    )
    .nullable(),
  thresholds: z.object({ maxAgeSeconds: z.number(), keyExpiryWarningSeconds: z.number() }),
});
export type StatusReport = z.output<typeof StatusReport>;
type Problem = StatusReport['problems'][number];

export { formatAge };

const secondsSince = (iso: string, now: Date) => (now.getTime() - Date.parse(iso)) / 1000;

/** The settings that name where status looks: the commands it advises take them too. */
export const ADVICE_TARGET = [
  'deployment',
  'region',
  'bucket',
  'kvsArn',
  'origin',
  'store',
  's3PathStyle',
] as const;
type TargetSetting = (typeof ADVICE_TARGET)[number];

/**
 * Where status looked, so that each command its advice prints acts there too, as printed. `flags`: each target
 * setting the user gave as a flag, as its text (`true`: a flag without a value); one given as a variable is not
 * repeated, as it is still set where the advice is run. `kind`: a deployment, whose builder runs again with
 * `catalog rebuild`; the local stack (no target at all), whose base URL `catalog publish` finds itself; or a
 * target named by other settings, whose publish needs the base URL too.
 */
export interface AdviceTarget {
  readonly kind: 'deployment' | 'local-stack' | 'settings';
  readonly flags: Readonly<Partial<Record<TargetSetting, string | true>>>;
}

/** The local stack, named by no setting. */
const LOCAL_STACK_ADVICE: AdviceTarget = { kind: 'local-stack', flags: {} };

/** The target settings `catalog rebuild` and `catalog keys issue` take (the others take them all). */
const REBUILD_TAKES: readonly TargetSetting[] = ['deployment', 'region'];
const KEYS_TAKES: readonly TargetSetting[] = ['deployment', 'region', 'kvsArn', 'store'];

/** A word as a POSIX shell reads it back: as it is when it has nothing the shell reads, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** `catalog WORDS ARGS`, then the flags of `target` the command takes. */
function catalogCommand(
  target: AdviceTarget,
  words: string,
  args: readonly string[] = [],
  takes: readonly TargetSetting[] = ADVICE_TARGET,
): string {
  const flags = takes.flatMap((name) => {
    const value = target.flags[name];
    return value === undefined
      ? []
      : value === true
        ? [settingRef(name)]
        : [settingRef(name), shellWord(value)];
  });
  return ['catalog', words, ...args, ...flags].join(' ');
}

/**
 * The command that runs the builder again on `target`: `catalog rebuild` for a deployment (after `catalog
 * unpin` when pinned), else `catalog publish` with the source (and, but for the local stack, the base URL)
 * the last run's record keeps; then what the reader must add to it: the secrets the record does not keep
 * (`***`), the token's variable, or the source no run recorded. `--recover` is the command line's alone.
 */
function runAgain(
  target: AdviceTarget,
  record: LastRun | null,
  how: { readonly force?: boolean; readonly recover?: boolean; readonly unpin?: boolean },
): string {
  if (target.kind === 'deployment' && !how.recover) {
    const rebuild = catalogCommand(target, 'rebuild', how.force ? [settingRef('force')] : [], REBUILD_TAKES);
    return how.unpin ? `${catalogCommand(target, 'unpin')}, then ${rebuild}` : rebuild;
  }
  const given = record?.settings;
  const baseUrl =
    target.kind === 'settings' ? [settingRef('baseUrl'), given ? shellWord(given.baseUrl) : 'URL'] : [];
  const args = [
    settingRef('source'),
    given ? shellWord(given.source) : 'SOURCE',
    ...baseUrl,
    ...(how.force ? [settingRef('force')] : []),
    ...(how.recover ? [settingRef('recover')] : []),
    ...(how.unpin ? [settingRef('unpin')] : []),
  ];
  const add: string[] = [];
  if (given === undefined)
    add.push(
      `${baseUrl.length > 0 ? 'SOURCE and URL: the plans source and the base URL' : 'SOURCE: the plans source'}, which no run has recorded`,
    );
  else {
    if (`${given.source} ${given.baseUrl}`.includes(REDACTED))
      add.push(`with the secrets the record does not keep in place of ${REDACTED}`);
    if (given.withToken) add.push(`with the source's token in ${settingRef('sourceToken')}`);
  }
  const command = catalogCommand(target, 'publish', args);
  return add.length === 0 ? command : `${command} (${add.join('; ')})`;
}

/**
 * Judges the facts at `now` (docs/decisions.md#operations lists the findings). Broken (exit 2): nothing the
 * edge can serve, or a live object that differs from its manifest. Degraded (exit 1): older than `maxAgeMs`,
 * a failure no run has succeeded since, an abandoned run, an unreadable record, no usable key, a flat catalog,
 * a canary whose last run had a row fail or not run, or that has not reported for two of its periods.
 */
export function evaluateStatus(
  facts: StatusFacts,
  options: {
    readonly now: Date;
    readonly maxAgeMs: number;
    /** Where status looked, for the commands its advice prints (default: the local stack). */
    readonly target?: AdviceTarget | undefined;
  },
): StatusReport {
  const { now } = options;
  const target = options.target ?? LOCAL_STACK_ADVICE;
  const problems: Problem[] = [];
  const broken = (message: string) => problems.push({ level: 'broken', message });
  const degraded = (message: string) => problems.push({ level: 'degraded', message });
  const { live } = facts;
  const record = facts.lastRun && 'record' in facts.lastRun ? facts.lastRun.record : null;
  const lastRunProblem = facts.lastRun && 'problem' in facts.lastRun ? facts.lastRun.problem : null;
  const { pin } = pointerOf(facts.entries);

  let summary: StatusReport['live'] = {
    state: live.kind,
    buildId: null,
    generatedAt: null,
    ageSeconds: null,
    confirmedAt: null,
    confirmedAgeSeconds: null,
    counts: null,
    plans: null,
    objects: null,
    pages: null,
  };
  const unpin = Boolean(pin);
  if (facts.deployment !== null) broken(facts.deployment);
  else
    switch (live.kind) {
      case 'none':
        broken(`no live build: build:live is not set in ${facts.store}; run ${runAgain(target, record, {})}`);
        break;
      case 'unreadable':
        summary = { ...summary, buildId: live.id };
        broken(
          `build:live names ${shownValue(live.id)}, which the edge cannot serve (${live.reason}): every catalog request gets 500; run ${catalogCommand(target, 'rollback')} (back to the build live before it, or ${settingRef('to')} another complete one), or ${runAgain(target, record, { recover: true, unpin })}`,
        );
        break;
      case 'build': {
        const { manifest, damage, pageDamage } = live;
        const confirmed = record?.confirmed;
        const confirmation =
          confirmed?.buildId === live.id && Date.parse(confirmed.at) > Date.parse(manifest.generatedAt)
            ? confirmed.at
            : manifest.generatedAt;
        const age = secondsSince(confirmation, now);
        const pages = Object.keys(manifest.pages).length;
        summary = {
          ...summary,
          buildId: live.id,
          generatedAt: manifest.generatedAt,
          ageSeconds: Math.round(secondsSince(manifest.generatedAt, now)),
          confirmedAt: confirmation,
          confirmedAgeSeconds: Math.round(age),
          counts: perDiscipline((discipline) => manifest.counts[discipline]),
          plans: manifest.plans,
          objects: { expected: Object.keys(manifest.objects).length + pages, damaged: [...damage] },
          pages: { expected: pages, damaged: [...pageDamage] },
        };
        const named = (lines: readonly string[]) =>
          `${lines.slice(0, NAMED_DAMAGE).join('; ')}${lines.length > NAMED_DAMAGE ? `; and ${lines.length - NAMED_DAMAGE} more` : ''}`;
        if (damage.length > 0)
          broken(
            `live build ${live.id} at ${facts.origin} does not match its manifest: ${named(damage)}; run ${runAgain(target, record, { force: true, unpin })} (a fresh build, every page written again), or ${catalogCommand(target, 'rollback')}`,
          );
        if (pageDamage.length > 0)
          broken(
            `the live pages at ${facts.origin} are not build ${live.id}'s: ${named(pageDamage)}; run ${runAgain(target, record, {})} (every run puts the live pages right first)`,
          );
        if (age * 1000 > options.maxAgeMs) {
          const held = pin ? `; pinned to ${shownValue(pin.build)} since ${pin.at} by ${pin.by}` : '';
          degraded(
            `the catalog was last built or confirmed against the source ${formatAge(age)} ago (${confirmation}), more than ${settingRef('maxAge')} ${formatAge(options.maxAgeMs / 1000)}${held}`,
          );
        }
        break;
      }
    }

  if (lastRunProblem !== null) degraded(`the last run's record: ${lastRunProblem}`);
  // A failure stands until a run succeeds: a busy run after it (another run was at work) carries it over.
  const failure = record && failureOf(record);
  if (record && failure) {
    const since =
      failure.finished === record.finished
        ? ''
        : `; no run has succeeded since (the last, ${record.outcome}, finished ${record.finished})`;
    if (failure.outcome === 'not-configured')
      degraded(
        `the builder's source is not configured (run finished ${failure.finished}): ${failure.reason}${since}`,
      );
    else {
      const what = failure.outcome === 'refused' ? `was refused (${failure.guard ?? 'a guard'})` : 'failed';
      const who = since
        ? `the run that finished ${failure.finished}`
        : `the last run (finished ${failure.finished})`;
      degraded(`${who} ${what}: ${failure.reason}${since}`);
    }
  }
  // A run that took the lock and never recorded its end (killed, or out of time) counts as failed.
  let runLock: StatusReport['runLock'] = null;
  if (facts.runLock) {
    const { holder, gone } = facts.runLock;
    const expired = Date.parse(holder.expires) <= now.getTime();
    const recorded =
      record !== null &&
      record.outcome !== 'busy' &&
      Date.parse(record.started) <= Date.parse(holder.since) &&
      Date.parse(holder.since) <= Date.parse(record.finished);
    const abandoned = (expired || gone) && !recorded;
    runLock = { ...holder, state: abandoned ? 'abandoned' : 'running' };
    if (abandoned)
      degraded(
        `a run never finished: ${describeHolder(holder)} ${gone ? 'has exited' : 'let its run lock expire'} without recording how it ended (killed, or out of time); it counts as failed until a run succeeds`,
      );
  }

  // Each beat's last report: a failing row, an unreachable deployment or a silent beat is degraded.
  const conformance: StatusReport['conformance'] = { probe: null, full: null };
  for (const beat of CANARY_BEATS) {
    const canary = facts.canary?.[beat] ?? null;
    if (canary && 'problem' in canary) {
      conformance[beat] = {
        line: canary.problem,
        ageSeconds: null,
        silent: false,
        stopped: false,
        report: null,
        problem: canary.problem,
      };
      degraded(`conformance (${beat}): the canary's report: ${canary.problem}`);
    } else if (canary) {
      const judged = judgeConformance(canary.report, now, canary.stopped);
      conformance[beat] = {
        line: judged.line,
        ageSeconds: judged.ageSeconds,
        silent: judged.silent,
        stopped: canary.stopped,
        report: canary.report,
        problem: null,
      };
      if (judged.problem) degraded(judged.problem);
    }
  }

  const rows = listKeys(facts.entries, now);
  const partners = new Map<string, number>();
  const expiringSoon: StatusReport['keys']['expiringSoon'] = [];
  let invalid = 0;
  for (const row of rows) {
    if (row.partner === null) {
      invalid += 1;
      continue;
    }
    const usable = row.status === 'active' || row.status === 'expiring';
    partners.set(row.partner, (partners.get(row.partner) ?? 0) + (usable ? 1 : 0));
    if (
      row.status === 'expiring' &&
      row.expires !== null &&
      Date.parse(row.expires) - now.getTime() <= KEY_EXPIRY_WARNING_MS
    )
      expiringSoon.push({ partner: row.partner, id: row.id, expires: row.expires });
  }
  if (![...partners.values()].some((keys) => keys > 0)) {
    const expired = rows.length - invalid;
    const unusable = [expired ? `${expired} expired` : '', invalid ? `${invalid} unreadable` : '']
      .filter(Boolean)
      .join(', ');
    degraded(
      `no usable API key in ${facts.store}${unusable ? ` (${unusable})` : ''}: every partner request gets 401; issue one: ${catalogCommand(target, 'keys issue', [settingRef('partner'), 'LABEL'], KEYS_TAKES)}`,
    );
  }

  problems.sort((a, b) => (a.level === b.level ? 0 : a.level === 'broken' ? -1 : 1));
  const health = problems[0]?.level ?? 'healthy';
  return {
    command: 'status',
    checkedAt: now.toISOString(),
    health,
    exitCode: health === 'broken' ? 2 : health === 'degraded' ? 1 : 0,
    problems,
    origin: facts.origin,
    store: facts.store,
    live: summary,
    pin,
    lastRun: record,
    lastRunProblem,
    runLock,
    keys: { partners: [...partners].map(([partner, keys]) => ({ partner, keys })), expiringSoon, invalid },
    cors: { origin: facts.entries.get(KVS_CORS_ORIGIN) ?? null },
    conformance,
    functions:
      facts.functions?.map((fn) => ({
        name: fn.name,
        kind: fn.kind,
        stages: 'stages' in fn ? fn.stages : null,
        problem: 'problem' in fn ? fn.problem : null,
      })) ?? null,
    thresholds: {
      maxAgeSeconds: options.maxAgeMs / 1000,
      keyExpiryWarningSeconds: KEY_EXPIRY_WARNING_MS / 1000,
    },
  };
}

/** Reads the facts of {@link evaluateStatus}: the live build judged by the MD5s its origin lists. */
export async function readStatusFacts(
  target: PublishTarget,
  options: {
    /** Whether the deployment has a canary now (its stack's outputs say so); undefined: not known here. */
    readonly canaryDeployed?: boolean | undefined;
    /** The deployment's functions, and the CloudFront client to read their stages with. */
    readonly functions?: FunctionsToRead | undefined;
  } = {},
): Promise<StatusFacts> {
  const [{ proveDeployment, readLive }, { storeFailure }, { isAlive }, { DeploymentError }] =
    await Promise.all([
      import('../publish/steps.ts'),
      import('../publish/errors.ts'),
      import('../files/alive.ts'),
      import('../publish/pointer.ts'),
    ]);
  const entries = await target.kvs.read().catch((error: unknown) => {
    if (error instanceof StoreError) throw error;
    throw storeFailure(`reading ${target.kvs.name} failed`, { cause: error, readOnly: true });
  });
  const deployment = await proveDeployment(target, {}).then(
    () => null,
    (error: unknown) => {
      if (error instanceof DeploymentError) return error.message.replace(/; nothing was changed/, '');
      throw error;
    },
  );
  const functions = options.functions ? readFunctionStages(options.functions) : undefined;
  try {
    const [{ live }, object, lock, ...canaryObjects] = await Promise.all([
      deployment === null
        ? readLive(target.origin, pointerOf(entries).live)
        : { live: { kind: 'none' } as const },
      target.origin.get(STATE_LAST_RUN),
      readLock(target.origin),
      ...CANARY_BEATS.map((beat) => target.origin.get(STATE_CANARY[beat])),
    ]);
    const holder = lock?.holder;
    /** A beat's report as read: `stopped` for a local canary whose catalog start exited, or a removed one. */
    const canaryFact = (beat: CanaryBeat, index: number): CanaryFact | null => {
      const stored = canaryObjects[index];
      const canary = stored ? parseCanaryReport(stored.body, beat) : null;
      if (canary === null || 'problem' in canary) return canary;
      const { runner } = canary.report;
      return {
        report: canary.report,
        stopped:
          runner.kind === 'local'
            ? runner.host === hostname() && !isAlive(runner.pid)
            : options.canaryDeployed === false,
      };
    };
    return {
      origin: target.origin.name,
      store: target.kvs.name,
      entries,
      deployment,
      live,
      lastRun: object ? parseLastRun(object.body) : null,
      runLock: holder ? { holder, gone: holder.host === hostname() && !isAlive(holder.pid) } : null,
      canary: Object.fromEntries(CANARY_BEATS.map((beat, index) => [beat, canaryFact(beat, index)])),
      ...(functions ? { functions: await functions } : {}),
    };
  } catch (error) {
    throw storeFailure(`reading the live build and the last run from ${target.origin.name} failed`, {
      cause: error,
      readOnly: true,
    });
  }
}

/** The functions status compares the stages of, and the client it reads them with. */
export interface FunctionsToRead {
  readonly client: CloudFrontClient;
  readonly names: readonly { readonly name: string; readonly kind: string }[];
}

/** Each function's stages, compared (four reads a function, all at once); a failure is that function's fact. */
async function readFunctionStages(functions: FunctionsToRead): Promise<FunctionStagesFact[]> {
  const { readStages, stagesDiffer } = await import('./function-stages.ts');
  return Promise.all(
    functions.names.map(async ({ name, kind }): Promise<FunctionStagesFact> => {
      try {
        const stages = await readStages(functions.client, name, AbortSignal.timeout(10_000));
        return {
          name,
          kind,
          stages: stages.live === null ? 'unpublished' : stagesDiffer(stages) ? 'differs' : 'same',
        };
      } catch (error) {
        return { name, kind, problem: `its stages could not be read (${describeCause(error)})` };
      }
    }),
  );
}

/** Reads and judges the status of a target at `now`. */
export async function catalogStatus(
  target: PublishTarget,
  options: {
    readonly now: Date;
    readonly maxAgeMs: number;
    readonly canaryDeployed?: boolean | undefined;
    readonly functions?: FunctionsToRead | undefined;
    /** Where status looked, as its advice names it (default: the local stack). */
    readonly advice?: AdviceTarget | undefined;
  },
): Promise<StatusReport> {
  const facts = await readStatusFacts(target, {
    canaryDeployed: options.canaryDeployed,
    functions: options.functions,
  });
  return evaluateStatus(facts, { now: options.now, maxAgeMs: options.maxAgeMs, target: options.advice });
}
