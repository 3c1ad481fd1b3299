/**
 * npm run bench:wire — what a partner downloads, and what a publish costs. For catalogs of 1,000, 10,000 and
 * 30,000 generated plans: `catalog publish` into a local origin and store (the code path of S3 and the
 * KeyValueStore), then one full fetch of `/api/plans` through `catalog serve` per Accept-Encoding form, against
 * the raw JSON, gzip level 6 and brotli quality 11 of the same bytes (the goal). Then a second publish of
 * changed plans over the first: its upload, verify and pointer-flip times from the publish summary.
 * Prints a table; asserts nothing.
 *
 *   npm run bench:wire [-- --sizes 1000,10000,30000]
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { generateRows } from '../fixtures/generate.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { issueKey } from '../keys/manage.ts';
import {
  decodedBody,
  httpRequest,
  localTargetEnv,
  runCatalog,
  scratchDir,
  startServe,
} from '../testing/cli.ts';

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '1000,10000,30000' } } });
const sizes = values.sizes.split(',').map(Number);

/** The Accept-Encoding forms a partner's client may send (undefined: no header). */
const FORMS: readonly (string | undefined)[] = [
  undefined,
  'identity',
  'gzip',
  'br',
  'br;q=0, gzip',
  'gzip, deflate, br',
  '*',
];

interface Summary {
  readonly buildId: string;
  readonly bytes: number;
  readonly durationsMs: Record<'complete' | 'upload' | 'verify' | 'go live' | 'total', number>;
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const pad = (cells: readonly string[], widths: readonly number[]) =>
  cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');

async function publish(dir: string, source: string): Promise<{ summary: Summary; wallMs: number }> {
  const started = performance.now();
  const result = await runCatalog(['publish'], {
    env: localTargetEnv(dir, { CATALOG_SOURCE: source, CATALOG_MIN_RATIO: '0' }),
  });
  const wallMs = performance.now() - started;
  if (result.code !== 0) throw new Error(`catalog publish failed: ${result.stderr}`);
  return { summary: JSON.parse(result.stdout.trim()) as Summary, wallMs };
}

const rows: string[][] = [];
const timings: string[][] = [];
const { dir, remove } = await scratchDir('catalog-bench-wire-');
try {
  for (const size of sizes) {
    const plans = [...generateRows(size, 20_261_123)];
    const source = join(dir, `source-${size}.json`);
    await writeFile(source, JSON.stringify(plans));
    const work = join(dir, String(size));
    const first = await publish(work, source);
    const key = (
      await issueKey(new FileKeyValueStore(join(work, 'kvs.json'), { create: true }), {
        partner: 'bench',
        now: new Date(),
      })
    ).key;

    const server = await startServe(['--origin', join(work, 'origin'), '--store', join(work, 'kvs.json')]);
    let raw: Buffer | undefined;
    const fetched: { form: string; encoding: string; bytes: number }[] = [];
    try {
      for (const form of FORMS) {
        const answer = await httpRequest(server.url, {
          method: 'GET',
          target: '/api/plans',
          headers: [
            ['X-Api-Key', key],
            ...(form === undefined ? [] : [['Accept-Encoding', form] as [string, string]]),
          ],
        });
        if (answer.status !== 200) throw new Error(`GET /api/plans (${form}) answered ${answer.status}`);
        const encoding = String(answer.headers['content-encoding'] ?? 'identity');
        const decoded = decodedBody(answer);
        raw ??= decoded;
        if (!decoded.equals(raw)) throw new Error(`Accept-Encoding ${form}: the decoded body differs`);
        fetched.push({ form: form ?? '(none)', encoding, bytes: answer.body.length });
      }
    } finally {
      await server.stop();
    }
    if (!raw) throw new Error('nothing fetched');
    const gzip6 = gzipSync(raw, { level: 6 }).length;
    const brotli11 = brotliCompressSync(raw, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 11,
        [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      },
    }).length;
    for (const { form, encoding, bytes } of fetched)
      rows.push([
        String(size),
        form,
        encoding,
        kb(bytes),
        kb(raw.length),
        kb(gzip6),
        kb(brotli11),
        (bytes / brotli11).toFixed(3),
      ]);

    // A second publish over the first: changed plans, so a real upload and a real flip.
    const changed = plans.map((row, i) =>
      i === 0 ? { ...row, title: `${String(row.title)} (changed)` } : row,
    );
    await writeFile(source, JSON.stringify(changed));
    const second = await publish(work, source);
    for (const [label, run] of [
      ['first', first],
      ['second', second],
    ] as const) {
      const d = run.summary.durationsMs;
      timings.push([
        String(size),
        label,
        kb(run.summary.bytes),
        `${(run.wallMs / 1000).toFixed(2)} s`,
        `${d.complete} ms`,
        `${d.upload} ms`,
        `${d.verify} ms`,
        `${d['go live']} ms`,
      ]);
    }
  }
} finally {
  await remove();
}

const head = [
  'plans',
  'Accept-Encoding',
  'served as',
  'bytes',
  'raw JSON',
  'gzip-6',
  'brotli-11',
  'bytes/brotli-11',
];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
console.log('bytes per full fetch of /api/plans through catalog serve');
console.log(pad(head, widths));
for (const row of rows) console.log(pad(row, widths));

const timingHead = ['plans', 'publish', 'build bytes', 'wall', 'complete', 'upload', 'verify', 'go live'];
const timingWidths = timingHead.map((h, i) => Math.max(h.length, ...timings.map((r) => r[i]?.length ?? 0)));
console.log('\ncatalog publish into a local origin and store (wall includes process start)');
console.log(pad(timingHead, timingWidths));
for (const row of timings) console.log(pad(row, timingWidths));
