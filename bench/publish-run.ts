/**
 * One publish for `npm run bench:publish`, in its own process so that its CPU time is its own (s3rver and the
 * KeyValueStore stand-in run in the benchmark's process): the application layer's `publish` against the
 * production S3 and KeyValueStore clients pointed at them. Prints the summary as one JSON line.
 *
 *   tsx bench/publish-run.ts '{"endpoint":…,"bucket":…,"kvsPort":…,"kvsArn":…,"source":…,"baseUrl":…,"keep":…}'
 */
import { publish } from '../app/run.ts';
import { defaultOf, parseSettings } from '../app/settings/index.ts';
import { CloudFrontKeyValueStore } from '../keys/kvs-store.ts';
import { S3Origin } from '../publish/s3-origin.ts';
import { testS3Client } from '../testing/aws.ts';
import { kvsClientFor } from '../testing/kvs.ts';

const args = JSON.parse(process.argv[2] ?? '{}') as {
  endpoint: string;
  bucket: string;
  kvsPort: number;
  kvsArn: string;
  source: string;
  baseUrl: string;
  keep: number;
};
const s3 = testS3Client(args.endpoint, 3);
const outcome = await publish(
  {
    ...parseSettings('build', () => undefined, String),
    source: args.source,
    baseUrl: args.baseUrl,
    allowEmpty: defaultOf('allowEmpty'),
    minRatio: defaultOf('minRatio'),
    keepBuilds: args.keep,
  },
  {
    origin: new S3Origin(s3, args.bucket),
    kvs: new CloudFrontKeyValueStore(kvsClientFor(args.kvsPort), args.kvsArn),
  },
  { now: new Date(), force: false, report: (line) => process.stderr.write(`${line}\n`) },
);
s3.destroy();
process.stdout.write(`${JSON.stringify(outcome.summary)}\n`);
