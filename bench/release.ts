/**
 * npm run bench:release — the deploy's release step (lambda/release.ts) for one deploy, against the stand-ins for
 * CloudFront's functions API (testing/cloudfront.ts, the real built bundles in each stage) and the KeyValueStore
 * API (testing/kvs.ts), with CloudFront answering each call after `--latency MS` (default 250: TestFunction runs
 * the function in CloudFront's runtime; AWS publishes no figure). Four deploys: a first one (no LIVE yet), one
 * that changes both functions, one that changes none, and one where CloudFront answers at most `--rate N`
 * (default 5) TestFunction calls a second and refuses the others with its throttling error (AWS publishes no rate). For each: the wall time and every API call
 * by action (the stand-in lists a store's keys two to a page; the service, fifty). Prints the figures; asserts
 * nothing.
 */
import { parseArgs } from 'node:util';
import { KVS_CORS_ORIGIN } from '../contract/index.ts';
import { loadFunction, VIEWER_RESPONSE_RUNTIME } from '../gateway/local/sandbox.ts';
import { createReleaseHandler, releaseClients } from '../lambda/release.ts';
import { TEST_AWS_ENV } from '../testing/aws.ts';
import { FakeCloudFront } from '../testing/cloudfront.ts';
import { FakeKvs, resolveKvsTestHost } from '../testing/kvs.ts';
import { builtFunctionCode } from '../testing/world.ts';

const { values } = parseArgs({
  options: { latency: { type: 'string', default: '250' }, rate: { type: 'string', default: '5' } },
});
const LATENCY_MS = Number(values.latency);
const RATE = Number(values.rate);
const KVS_ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
const NAMES = { request: 'Bench-viewer-request', response: 'Bench-viewer-response' } as const;

const undoDns = resolveKvsTestHost();
const kvs = new FakeKvs(KVS_ARN);
await new Promise<void>((resolve) => kvs.server.listen(0, '127.0.0.1', resolve));
kvs.entries.set(KVS_CORS_ORIGIN, 'https://app.partner.example');
const cloudfront = new FakeCloudFront();
Object.assign(process.env, {
  ...TEST_AWS_ENV,
  AWS_ENDPOINT_URL_CLOUDFRONT: await cloudfront.start(),
  AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE: `http://kvs.test:${(kvs.server.address() as { port: number }).port}`,
  AWS_EC2_METADATA_DISABLED: 'true',
});
const code = {
  request: await builtFunctionCode('viewer-request'),
  response: await builtFunctionCode('viewer-response'),
};
const reader = { refresh: () => undefined, peek: (key: string) => kvs.entries.get(key) };
const stage = (source: string, response: boolean) => ({
  code: source,
  fn: loadFunction(source, { kvs: reader, ...(response ? VIEWER_RESPONSE_RUNTIME : {}) }),
});

/** Both functions, LIVE none, the same code, or older code. */
function deploy(live: 'none' | 'same' | 'older') {
  for (const [kind, response] of [
    ['request', false],
    ['response', true],
  ] as const) {
    const current = code[kind];
    cloudfront.define(NAMES[kind], {
      development: stage(current, response),
      live: live === 'none' ? null : stage(live === 'same' ? current : `${current}\n// older`, response),
    });
  }
}

const handler = createReleaseHandler({ clients: releaseClients, log: () => {} });
const event = {
  RequestType: 'Update',
  ResourceProperties: {
    Functions: [
      { Name: NAMES.request, Kind: 'viewer-request', CodeSha256: '0'.repeat(64) },
      { Name: NAMES.response, Kind: 'viewer-response', CodeSha256: '1'.repeat(64) },
    ],
    KeyValueStoreArn: KVS_ARN,
    Publish: 'true',
  },
};

console.log(
  `the release step of one deploy, CloudFront answering after ${LATENCY_MS} ms, TestFunction 4 at a time`,
);
const rows: string[][] = [];
for (const [label, live, rate] of [
  ['first deploy (no LIVE)', 'none', Number.POSITIVE_INFINITY],
  ['both functions changed', 'older', Number.POSITIVE_INFINITY],
  ['no function changed', 'same', Number.POSITIVE_INFINITY],
  [`both changed, ${RATE} tests a second`, 'older', RATE],
] as const) {
  deploy(live);
  cloudfront.recorded.length = 0;
  kvs.requests = [];
  cloudfront.latencyMs = LATENCY_MS;
  cloudfront.testsPerSecond = rate;
  const started = performance.now();
  const answer = await handler(event);
  const seconds = (performance.now() - started) / 1000;
  const byAction = new Map<string, number>();
  for (const call of cloudfront.recorded) byAction.set(call.action, (byAction.get(call.action) ?? 0) + 1);
  const cloudFrontCalls = cloudfront.recorded.length;
  rows.push([
    label,
    `${seconds.toFixed(1)} s`,
    String(cloudFrontCalls),
    [...byAction].map(([action, n]) => `${action} ${n}`).join(', '),
    `${kvs.requests.length} (${['describe', 'list', 'update'].map((kind) => `${kind} ${kvs.calls().filter((c) => c === kind).length}`).join(', ')})`,
    JSON.stringify(answer.Data),
  ]);
}
const header = ['deploy', 'wall', 'CloudFront calls', 'by action', 'KeyValueStore calls', 'outcome'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
for (const row of [header, ...rows])
  console.log(row.map((cell, i) => cell.padEnd(widths[i] as number)).join('  '));

await cloudfront.stop();
await new Promise((resolve) => kvs.server.close(resolve));
undoDns();
