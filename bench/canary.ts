/**
 * npm run bench:canary — what the canary costs, counted at the local edge (the real function bundles over a
 * scratch local stack of N generated plans, CORS on) from its access log: the probe the first time (each catalog
 * in brotli) and unchanged (304s), the full table, each run by the canary's Lambda bundle (dist/lambda/canary.mjs)
 * in a process of its own (its peak RSS, s3rver for the bucket, stand-ins for Secrets Manager and the key-value
 * store), and `catalog check` of this checkout and, with `--before`, of another one (today's full run). Prints a
 * table per size, each budget and whether it holds, and the monthly cost of both beats; exits 1 when a budget
 * fails. The byte and memory budgets are the issue's, at 30,000 plans: sizes below it check the request budgets.
 *
 *   npm run bench:canary [-- --plans 480,30000] [-- --before ../main/bin/catalog.js]
 *
 * 480 generated plans make a catalog of about 200 KB (the README's cost example); 30,000 the top of the range.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { CanaryReport } from '../app/canary.ts';
import { plannedRequests } from '../app/check-rows.ts';
import { serveLocal } from '../app/local.ts';
import { publish } from '../app/run.ts';
import { defaultOf, parseSettings } from '../app/settings/index.ts';
import { KVS_CORS_ORIGIN, MONITORING_PARTNER, ORIGIN_FILES } from '../contract/index.ts';
import { generateRows } from '../fixtures/generate.ts';
import { PARTNER_ORIGIN } from '../gateway/cases.ts';
import type { AccessLogEntry } from '../gateway/local/server.ts';
import { setCorsOrigin } from '../keys/cors.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { issueKey } from '../keys/manage.ts';
import { CANARY_OUTFILE } from '../lambda/bundling.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import { startRecorder, startS3, TEST_AWS_ENV } from '../testing/aws.ts';
import { CATALOG_BIN, ROOT, scratchDir } from '../testing/cli.ts';
import { FakeKvs, RESOLVE_KVS_TEST_HOST } from '../testing/kvs.ts';
import { freePort } from '../testing/postgres.ts';
import { bundleCanary } from '../tools/build-lambda.ts';
import { measuredProcess } from './process.ts';

const { values } = parseArgs({
  options: {
    plans: { type: 'string', default: '480,30000' },
    before: { type: 'string' },
  },
});
const sizes = String(values.plans)
  .split(',')
  .map((n) => Number(n.trim()));
if (sizes.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error('--plans: whole numbers, such as 480,30000');
const before = values.before === undefined ? undefined : resolve(values.before);

/** The size the byte and memory budgets are stated at. */
const BUDGET_PLANS = 30_000;
const KIB = 1024;
const MONITORING_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:bench/monitoring-key-AbCdEf';
const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';

/**
 * The month the cost is for: each beat on its default schedule, the catalog changing `changesPerDay` times (each
 * change: one probe reads the catalogs whole and runs the full table at once).
 */
const MONTH = {
  probeRuns: (30 * 24 * 60) / defaultOf('canaryRateMinutes'),
  fullRuns: (30 * 24 * 60) / defaultOf('canaryFullRateMinutes'),
  changes: 30 * 4,
} as const;
/** US list prices (infra/README.md, "What it costs"). */
const PRICE = {
  request: 0.01 / 10_000,
  gigabyteOut: 0.085,
  functionInvocation: 0.1 / 1e6,
  storeRead: 0.03 / 1e6,
  /** Lambda arm64, per GB-second, and per request. */
  lambdaGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  s3Get: 0.0004 / 1000,
  s3Put: 0.005 / 1000,
  secretRead: 0.05 / 10_000,
  /** A usage record of about 300 bytes per request, ingested at $0.50/GB. */
  usageRecord: (300 / 1e9) * 0.5,
} as const;

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;
const kb = (bytes: number) => `${(bytes / 1e3).toFixed(1)} KB`;
const size = (bytes: number) =>
  bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : bytes >= 1e6 ? mb(bytes) : kb(bytes);
const dollars = (n: number) => `$${n.toFixed(2)}`;
const count = (n: number) => n.toLocaleString('en');

/** What one run cost at the edge: requests and body bytes received, from the access log. */
interface Traffic {
  readonly requests: number;
  readonly bytes: number;
}
/** A run measured: its traffic, and for a process its peak RSS and wall time. */
interface Measured extends Traffic {
  readonly rssBytes?: number;
  readonly wallMs?: number;
  readonly durationMs?: number;
}

let log: AccessLogEntry[] = [];
/** The traffic of what `run` did at the edge (HEAD bodies are not sent). */
async function traffic<T>(run: () => Promise<T>): Promise<{ result: T; traffic: Traffic }> {
  log = [];
  const result = await run();
  await new Promise((done) => setTimeout(done, 100));
  const lines = log;
  log = [];
  const bytes = lines.reduce((sum, line) => sum + (line.method === 'HEAD' ? 0 : line.bytes), 0);
  return { result, traffic: { requests: lines.length, bytes } };
}

/** Runs `node …args` in a process of its own: its output, wall time and peak RSS (bench/process.ts). */
const processRun = (args: readonly string[], env: Record<string, string>, cwd: string) =>
  measuredProcess(args, { env, cwd, usageFile: join(dir, 'usage.json') });

interface Budget {
  readonly what: string;
  readonly figure: string;
  readonly limit: string;
  /** True: holds; false: fails; null: not measured here (said in `limit`). */
  readonly holds: boolean | null;
}

// The SDK's notice that its releases after January 2027 need Node 22 is said once, in the root README.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const failures: string[] = [];
const { dir, remove } = await scratchDir('catalog-bench-canary-');
const s3 = await startS3();
const secrets = await startRecorder();
const kvs = new FakeKvs(KVS_ARN);
await new Promise<void>((done) => kvs.server.listen(0, '127.0.0.1', done));
kvs.entries.set(KVS_CORS_ORIGIN, PARTNER_ORIGIN);
try {
  await bundleCanary(ROOT);
  console.log(
    `bench:canary — ${sizes.map(count).join(' and ')} generated plans (seed 42), the local edge on 127.0.0.1 with CORS on, ${process.version}; the canary's Lambda bundle and catalog check each a process of their own`,
  );
  for (const plans of sizes) {
    const here = join(dir, String(plans));
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const source = join(dir, `plans-${plans}.json`);
    await writeFile(source, JSON.stringify([...generateRows(plans, 42)]));
    const origin = new DirectoryOrigin(join(here, 'origin'));
    const store = new FileKeyValueStore(join(here, 'kvs.json'), { create: true });
    const published = await publish(
      {
        ...parseSettings('build', () => undefined, String),
        source,
        baseUrl,
        allowEmpty: false,
        minRatio: 0,
        keepBuilds: 2,
      },
      { origin, kvs: store },
      { now: new Date(), force: true, report: () => {} },
    );
    if (published.summary.result !== 'published')
      throw new Error(`the publish of ${plans} plans ended ${published.summary.result}`);
    const buildId = published.summary.buildId;
    const buildDir = join(here, 'origin', 'builds', buildId);
    const identity = (await stat(join(buildDir, ORIGIN_FILES.all))).size;
    const brotli = (await stat(join(buildDir, `${ORIGIN_FILES.all}.br`))).size;
    const key = (await issueKey(store, { partner: MONITORING_PARTNER, now: new Date() })).key;
    await setCorsOrigin(store, PARTNER_ORIGIN);
    secrets.answerWith((request) =>
      request.headers['x-amz-target'] === 'secretsmanager.GetSecretValue'
        ? {
            status: 200,
            headers: { 'content-type': 'application/x-amz-json-1.1' },
            body: JSON.stringify({ ARN: MONITORING_ARN, Name: 'monitoring', SecretString: key }),
          }
        : { status: 404, body: '' },
    );
    const edge = await serveLocal(
      { origin: join(here, 'origin'), store: store.name, port, host: '127.0.0.1' },
      (entry) => log.push(entry as AccessLogEntry),
    );
    try {
      /** One invocation of the canary's Lambda bundle, as the scheduler makes it. */
      const lambda = async (beat: 'probe' | 'full'): Promise<Measured & { reports: CanaryReport[] }> => {
        const script = [
          `const { handler } = await import(${JSON.stringify(join(ROOT, CANARY_OUTFILE))});`,
          `const reports = await handler({ beat: ${JSON.stringify(beat)} }, { functionName: 'bench-canary', getRemainingTimeInMillis: () => 140000 });`,
          "process.stdout.write('\\n' + JSON.stringify(reports) + '\\n');",
        ].join('\n');
        const { result, traffic: counted } = await traffic(() =>
          processRun(
            ['--import', RESOLVE_KVS_TEST_HOST, '--input-type=module', '-e', script],
            {
              ...TEST_AWS_ENV,
              AWS_ENDPOINT_URL_S3: s3.endpoint,
              AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
              AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${(kvs.server.address() as { port: number }).port}`,
              CATALOG_S3_PATH_STYLE: '1',
              CATALOG_BASE_URL: baseUrl,
              CATALOG_BUCKET: s3.bucket,
              CATALOG_KVS_ARN: KVS_ARN,
              CATALOG_MONITORING_KEY_SECRET_ARN: MONITORING_ARN,
            },
            here,
          ),
        );
        if (result.code !== 0)
          throw new Error(`the canary bundle (${beat}) exited ${result.code}: ${result.stderr}`);
        const reports = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '[]') as CanaryReport[];
        for (const report of reports)
          if (report.counts.fail > 0 || report.counts.notRun > 0)
            throw new Error(`the ${report.beat} run did not pass: ${JSON.stringify(report.failing[0])}`);
        const reported = reports.reduce((sum, report) => sum + report.requests, 0);
        if (reported !== counted.requests)
          throw new Error(
            `the ${beat} run reports ${reported} requests, the edge logged ${counted.requests}`,
          );
        return {
          reports,
          ...counted,
          rssBytes: result.rssBytes,
          wallMs: result.wallMs,
          durationMs: reports.reduce((sum, report) => sum + report.durationMs, 0),
        };
      };
      /** `catalog check` of a checkout's bin, with the canary's key: the full table as that version sends it. */
      const check = async (bin: string): Promise<Measured> => {
        const { result, traffic: counted } = await traffic(() =>
          processRun(
            [
              bin,
              'check',
              '--base-url',
              baseUrl,
              '--cors-origin',
              PARTNER_ORIGIN,
              '--json',
              '--deadline',
              '10m',
            ],
            { CATALOG_CHECK_KEY: key, HOME: process.env.HOME ?? dir },
            ROOT,
          ),
        );
        if (result.code !== 0) throw new Error(`${bin} check exited ${result.code}: ${result.stderr}`);
        return { ...counted, rssBytes: result.rssBytes, wallMs: result.wallMs };
      };

      const probeFirst = await lambda('probe');
      const probeUnchanged = await lambda('probe');
      const full = await lambda('full');
      const checkAfter = await check(CATALOG_BIN);
      const checkBefore = before ? await check(before) : undefined;
      const distinct = plannedRequests({
        baseUrl,
        key,
        forged: '',
        cors: PARTNER_ORIGIN,
        maxAgeMs: defaultOf('maxAge'),
        now: new Date(),
        keyInUrl: false,
      }).uses.size;

      const rows: [string, Measured][] = [
        ['probe, first (each catalog in brotli)', probeFirst],
        ['probe, unchanged (304s)', probeUnchanged],
        ['full table (the canary)', full],
        ['catalog check (this checkout)', checkAfter],
        ...(checkBefore ? ([[`catalog check (${before})`, checkBefore]] as [string, Measured][]) : []),
      ];
      console.log(
        `\n${count(plans)} plans: the whole catalog ${size(identity)}, in brotli ${size(brotli)}; build ${buildId}`,
      );
      console.log(
        `${'run'.padEnd(44)}${'requests'.padStart(9)}${'received'.padStart(12)}${'peak RSS'.padStart(11)}${'run ms'.padStart(9)}`,
      );
      for (const [label, m] of rows)
        console.log(
          `${label.slice(0, 43).padEnd(44)}${String(m.requests).padStart(9)}${size(m.bytes).padStart(12)}${(m.rssBytes ? `${(m.rssBytes / 2 ** 20).toFixed(0)} MiB` : '').padStart(11)}${String(m.durationMs ?? Math.round(m.wallMs ?? 0)).padStart(9)}`,
        );

      const atBudgetSize = plans >= BUDGET_PLANS;
      const memoryMiB = defaultOf('canaryMemoryMiB');
      const peakMiB = Math.max(probeFirst.rssBytes ?? 0, full.rssBytes ?? 0) / 2 ** 20;
      const budgets: Budget[] = [
        ...[probeFirst, probeUnchanged].map((probe, index) => ({
          what: `probe requests (${index === 0 ? 'first' : 'unchanged'})`,
          figure: String(probe.requests),
          limit: '≤ 12',
          holds: probe.requests <= 12,
        })),
        {
          what: 'probe bytes, first',
          figure: size(probeFirst.bytes),
          limit: `≤ 1.2 × ${size(brotli)} + 64 KiB = ${size(1.2 * brotli + 64 * KIB)}`,
          holds: atBudgetSize ? probeFirst.bytes <= 1.2 * brotli + 64 * KIB : null,
        },
        {
          what: 'probe bytes, unchanged',
          figure: size(probeUnchanged.bytes),
          limit: '≤ 8 KiB (a few KiB)',
          holds: probeUnchanged.bytes <= 8 * KIB,
        },
        {
          what: 'full table: each distinct request once',
          figure: `${full.requests} sent, ${distinct} distinct`,
          limit: 'sent = distinct',
          holds: full.requests === distinct,
        },
        {
          what: 'full table bytes against today’s',
          figure: checkBefore ? `${((100 * full.bytes) / checkBefore.bytes).toFixed(1)} %` : '-',
          limit: checkBefore ? `≤ 40 % of ${size(checkBefore.bytes)}` : 'give --before to compare',
          holds: checkBefore && atBudgetSize ? full.bytes <= 0.4 * checkBefore.bytes : null,
        },
        {
          what: `canary peak RSS against canaryMemoryMiB ${memoryMiB}`,
          figure: `${peakMiB.toFixed(0)} MiB (${((100 * peakMiB) / memoryMiB).toFixed(0)} %)`,
          limit: '< 60 %',
          holds: atBudgetSize ? peakMiB < 0.6 * memoryMiB : null,
        },
      ];
      console.log(`\n${'budget'.padEnd(45)}${'figure'.padEnd(26)}${'limit'.padEnd(40)}holds`);
      for (const budget of budgets) {
        const verdict =
          budget.holds === null
            ? `n/a${atBudgetSize ? '' : ` (stated at ${count(BUDGET_PLANS)} plans)`}`
            : budget.holds
              ? 'yes'
              : 'NO';
        console.log(
          `${budget.what.padEnd(45)}${budget.figure.padEnd(26)}${budget.limit.padEnd(40)}${verdict}`,
        );
        if (budget.holds === false) failures.push(`${count(plans)} plans: ${budget.what}`);
      }

      // The month: every probe period a probe (a 304 run, or a whole read when the catalog changed), every full
      // period and after each change the full table.
      const fullRuns = MONTH.fullRuns + MONTH.changes;
      const month = (
        requests: number,
        bytes: number,
        invocations: number,
        lambdaSeconds: number,
        s3Gets: number,
        s3Puts: number,
      ) => {
        const edge =
          requests * (PRICE.request + 2 * PRICE.functionInvocation + 4 * PRICE.storeRead + PRICE.usageRecord);
        const out = (bytes / 1e9) * PRICE.gigabyteOut;
        const lambdaCost =
          invocations * (PRICE.lambdaRequest + PRICE.secretRead) +
          (lambdaSeconds * memoryMiB * PRICE.lambdaGbSecond) / 1024;
        return {
          requests,
          bytes,
          edge,
          out,
          lambda: lambdaCost,
          s3: s3Gets * PRICE.s3Get + s3Puts * PRICE.s3Put,
        };
      };
      const probeMonth = month(
        MONTH.probeRuns * probeUnchanged.requests,
        (MONTH.probeRuns - MONTH.changes) * probeUnchanged.bytes + MONTH.changes * probeFirst.bytes,
        MONTH.probeRuns,
        (MONTH.probeRuns * (probeUnchanged.durationMs ?? 0)) / 1000,
        MONTH.probeRuns,
        MONTH.probeRuns,
      );
      const fullMonth = month(
        fullRuns * full.requests,
        fullRuns * full.bytes,
        MONTH.fullRuns,
        (fullRuns * (full.durationMs ?? 0)) / 1000,
        0,
        fullRuns,
      );
      const todayMonth = checkBefore
        ? month(
            MONTH.probeRuns * checkBefore.requests,
            MONTH.probeRuns * checkBefore.bytes,
            MONTH.probeRuns,
            (MONTH.probeRuns * (full.durationMs ?? 0) * (checkBefore.bytes / Math.max(1, full.bytes))) / 1000,
            0,
            MONTH.probeRuns,
          )
        : undefined;
      console.log(
        `\na month (${count(MONTH.probeRuns)} probes, ${count(MONTH.fullRuns)} scheduled full runs and ${count(MONTH.changes)} after changes; memory ${memoryMiB} MiB; list prices before free tiers; CloudWatch's metrics and alarms apart)`,
      );
      console.log(
        `${'beat'.padEnd(34)}${'requests'.padStart(12)}${'data out'.padStart(12)}${'requests+fn+kvs+logs'.padStart(22)}${'transfer'.padStart(10)}${'Lambda'.padStart(9)}${'S3'.padStart(7)}${'total'.padStart(9)}`,
      );
      for (const [label, m] of [
        ['probe', probeMonth],
        ['full table', fullMonth],
        ...(todayMonth ? [['today: the full table every 5 min', todayMonth] as const] : []),
      ] as const) {
        const total = m.edge + m.out + m.lambda + m.s3;
        console.log(
          `${label.padEnd(34)}${count(m.requests).padStart(12)}${size(m.bytes).padStart(12)}${dollars(m.edge).padStart(22)}${dollars(m.out).padStart(10)}${dollars(m.lambda).padStart(9)}${dollars(m.s3).padStart(7)}${dollars(total).padStart(9)}`,
        );
      }
    } finally {
      await edge.close();
    }
  }
} finally {
  await new Promise((done) => kvs.server.close(done));
  await secrets.close();
  await s3.stop();
  await remove();
}
if (failures.length > 0) {
  console.error(`\nbench:canary: ${failures.length} budget(s) failed: ${failures.join('; ')}`);
  process.exitCode = 1;
}
