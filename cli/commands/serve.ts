import { type Command, Option } from 'commander';
import { z } from 'zod';
import { parseOptions } from '../options.ts';
import { repoRoot } from '../paths.ts';

export const DEFAULT_STORE = '.catalog/kvs.json';
export const DEFAULT_PORT = 8787;
export const DEFAULT_HOST = '127.0.0.1';

const ServeFlags = z.object({
  origin: z.string().trim().min(1, { error: 'must be a directory or s3://bucket' }),
  endpoint: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  store: z.string().trim().min(1),
  port: z.coerce
    .number({ error: 'must be a port number' })
    .int()
    .min(0)
    .max(65535, { error: 'must be 0–65535' }),
  host: z.string().trim().min(1),
});
export type ServeFlags = z.output<typeof ServeFlags>;

/** Starts the local edge and resolves once it listens; SIGINT/SIGTERM stop it gracefully. */
export async function serve(flags: ServeFlags, announce: (url: string) => void): Promise<void> {
  const [{ Edge }, { WatchedKeyValueStore }, { DirectoryOrigin, S3Origin }, server, { loadBuiltFunction }] =
    await Promise.all([
      import('../../gateway/edge/edge.ts'),
      import('../../gateway/edge/store.ts'),
      import('../../gateway/edge/origin.ts'),
      import('../../gateway/edge/server.ts'),
      import('../../gateway/load.ts'),
    ]);
  const logLine = (entry: object) => process.stderr.write(`${JSON.stringify(entry)}\n`);
  const kvs = new WatchedKeyValueStore(flags.store, {
    onError: (message) => logLine({ time: new Date().toISOString(), level: 'error', message }),
  });
  await kvs.load();
  const root = repoRoot();
  const functionLog = (line: string) => logLine({ time: new Date().toISOString(), function: line });
  const onStale = (message: string) => logLine({ time: new Date().toISOString(), level: 'warning', message });
  const [viewerRequest, viewerResponse] = await Promise.all([
    loadBuiltFunction(root, 'viewer-request', { kvs, log: functionLog, onStale }),
    loadBuiltFunction(root, 'viewer-response', { kvs, log: functionLog, onStale }),
  ]);
  let origin: InstanceType<typeof DirectoryOrigin> | InstanceType<typeof S3Origin>;
  const bucket = /^s3:\/\/([^/]+)\/?$/.exec(flags.origin)?.[1];
  if (bucket) {
    const { S3Client } = await import('@aws-sdk/client-s3');
    const client = new S3Client({
      region: process.env.AWS_REGION ?? 'us-east-1',
      ...(flags.endpoint ? { endpoint: flags.endpoint, forcePathStyle: true } : {}),
    });
    origin = new S3Origin(client, bucket);
  } else {
    origin = new DirectoryOrigin(flags.origin);
  }
  const edge = new Edge({ viewerRequest, viewerResponse, origin });
  const http = server.createEdgeServer({ edge, log: logLine });
  const address = await server.listen(http, flags.port, flags.host);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  announce(`http://${host}:${address.port}`);
  const stop = (signal: string) => {
    logLine({ time: new Date().toISOString(), message: `${signal}: shutting down` });
    server.shutdown(http).then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** The serve options, shared with `catalog start`. */
export function addServeOptions(command: Command, defaults: { origin: string }): Command {
  return command
    .addOption(
      new Option('--origin <dir|s3://bucket>', 'origin: a directory, or an S3 bucket')
        .env('CATALOG_ORIGIN')
        .default(defaults.origin),
    )
    .addOption(
      new Option('--endpoint <url>', 'S3-compatible endpoint for an s3:// origin').env('CATALOG_S3_ENDPOINT'),
    )
    .addOption(
      new Option('--store <file>', 'key-value store file (keys and CORS)')
        .env('CATALOG_STORE')
        .default(DEFAULT_STORE),
    )
    .addOption(
      new Option('--port <n>', 'port (0 picks a free one)').env('CATALOG_PORT').default(String(DEFAULT_PORT)),
    )
    .addOption(
      new Option('--host <host>', 'interface to listen on').env('CATALOG_HOST').default(DEFAULT_HOST),
    );
}

export function registerServe(program: Command, defaultOrigin: string): void {
  const command = program
    .command('serve')
    .description(
      'Run the local edge: the built CloudFront Functions in front of an origin directory or bucket.',
    );
  addServeOptions(command, { origin: defaultOrigin }).action(async () => {
    const flags = parseOptions(command, ServeFlags);
    await serve(flags, (url) => process.stderr.write(`catalog serve: listening on ${url}\n`));
  });
}

export { ServeFlags };
