/**
 * A publish or a rollback run by the application layer (app/run.ts) in a process of its own, that kills itself
 * (`kill -9`) just before its Nth write to the origin or the store: publish/kill.system.test.ts's deterministic
 * kill points, every step boundary and every write between them. Each write is named on stdout, one line each,
 * before it is made, so a run with no kill point lists them all. Test support only.
 *
 *   node --import tsx testing/kill-runner.ts '<JSON: see Run>'
 */
import { z } from 'zod';
import { publish, rollback } from '../app/run.ts';
import { defaultOf, parseSettings } from '../app/settings/index.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { CloudFrontKeyValueStore } from '../keys/kvs-store.ts';
import type { KeyValueStore } from '../keys/store.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import type { OriginStore } from '../publish/origin.ts';
import { S3Origin } from '../publish/s3-origin.ts';
import { kvsClientFor, resolveKvsTestHost } from './kvs.ts';
import { testS3Client } from './s3-client.ts';

/** What to run, where, and before which write to die (null: run to the end). */
export const Run = z.object({
  op: z.enum(['publish', 'rollback']),
  source: z.string(),
  keep: z.number().int().min(1),
  origin: z.union([z.object({ dir: z.string() }), z.object({ endpoint: z.string(), bucket: z.string() })]),
  store: z.union([z.object({ file: z.string() }), z.object({ port: z.number(), arn: z.string() })]),
  killAt: z.number().int().min(1).nullable(),
  /** The time of the run (ISO 8601): build ids sort by it. */
  now: z.string(),
});
export type Run = z.output<typeof Run>;

const run = Run.parse(JSON.parse(process.argv[2] ?? ''));
let writes = 0;
/** Names the write about to be made, and dies before it when it is the one. */
function writing(what: string): void {
  writes += 1;
  process.stdout.write(`${what}\n`);
  if (writes === run.killAt) process.kill(process.pid, 'SIGKILL');
}

const plain: OriginStore =
  'dir' in run.origin
    ? new DirectoryOrigin(run.origin.dir)
    : new S3Origin(testS3Client(run.origin.endpoint, 1), run.origin.bucket);
const origin: OriginStore = {
  name: plain.name,
  get: (key) => plain.get(key),
  list: (prefix) => plain.list(prefix),
  listPrefixes: (prefix) => plain.listPrefixes(prefix),
  async put(object, options) {
    writing(`put ${object.key}`);
    return plain.put(object, options);
  },
  async copy(from, to, options) {
    writing(`copy ${from} > ${to}`);
    return plain.copy(from, to, options);
  },
  async replace(object, md5) {
    writing(`replace ${object.key}`);
    return plain.replace(object, md5);
  },
  async delete(keys) {
    if (keys.length > 0) writing(`delete ${keys.join(' ')}`);
    return plain.delete(keys);
  },
  async deletePrefix(prefix) {
    writing(`delete ${prefix}`);
    return plain.deletePrefix(prefix);
  },
};
if ('port' in run.store) resolveKvsTestHost();
const store: KeyValueStore =
  'file' in run.store
    ? new FileKeyValueStore(run.store.file)
    : new CloudFrontKeyValueStore(kvsClientFor(run.store.port), run.store.arn);
const kvs: KeyValueStore = {
  name: store.name,
  read: () => store.read(),
  update: (change) => {
    writing(`update ${store.name}`);
    return store.update(change);
  },
};

const now = new Date(run.now);
if (run.op === 'publish')
  await publish(
    {
      ...parseSettings('build', () => undefined, String),
      source: run.source,
      baseUrl: 'https://plans.example.com',
      allowEmpty: false,
      minRatio: 0,
      keepBuilds: run.keep ?? defaultOf('keepBuilds'),
    },
    { origin, kvs },
    { now, force: false, report: () => {}, actor: 'kill-runner' },
  );
else await rollback({ origin, kvs }, { now, actor: 'kill-runner' });
process.stdout.write('done\n');
