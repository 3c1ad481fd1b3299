import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_OUT, describeBuild, runBuild } from './build.ts';
import { DEFAULT_HOST, DEFAULT_PORT, DEFAULT_STORE, serve } from './serve.ts';

/** The clear dev key of the local stack, kept so `npm start` can print it again. Local only, never deployed. */
const DEV_KEY_FILE = '.catalog/dev-key';
const DEV_PARTNER = 'dev';

/** Reuses the saved dev key while the store still accepts it; otherwise issues a new one and saves it. */
async function ensureDevKey(): Promise<string> {
  const [{ FileKeyValueStore }, { issueKey, lookupKey }] = await Promise.all([
    import('../../keys/file-store.ts'),
    import('../../keys/manage.ts'),
  ]);
  const store = new FileKeyValueStore(DEFAULT_STORE);
  const saved = (await readFile(DEV_KEY_FILE, 'utf8').catch(() => '')).trim();
  if (saved !== '') {
    const record = await lookupKey(store, saved);
    if (record && (!record.expires || Date.parse(record.expires) > Date.now())) return saved;
  }
  const issued = await issueKey(store, { partner: DEV_PARTNER, now: new Date() });
  await mkdir(dirname(DEV_KEY_FILE), { recursive: true });
  await writeFile(DEV_KEY_FILE, `${issued.key}\n`, { mode: 0o600 });
  await chmod(DEV_KEY_FILE, 0o600);
  return issued.key;
}

export function registerStart(program: Command): void {
  program
    .command('start')
    .description(
      `The local stack (npm start): build from the fixtures into ${DEFAULT_OUT}, make sure a dev key exists, serve on ${DEFAULT_HOST}:${DEFAULT_PORT}.`,
    )
    .action(async () => {
      const started = performance.now();
      const { DEFAULT_LINKS } = await import('../../builder/model.ts');
      const { DEFAULT_SOURCE } = await import('./build.ts');
      const result = await runBuild({ source: DEFAULT_SOURCE, ...DEFAULT_LINKS, skipInvalid: false });
      const { writeOriginDir } = await import('../../builder/output.ts');
      await writeOriginDir(DEFAULT_OUT, result.files);
      process.stderr.write(`${describeBuild(result, DEFAULT_OUT, performance.now() - started)}\n`);
      const key = await ensureDevKey();
      await serve(
        { origin: DEFAULT_OUT, store: DEFAULT_STORE, port: DEFAULT_PORT, host: DEFAULT_HOST },
        (url) => {
          process.stderr.write(
            [
              '',
              `Local stack ready on ${url} (Ctrl-C stops it). Access log lines follow on stderr.`,
              `  dev key (partner "${DEV_PARTNER}", local only, saved in ${DEV_KEY_FILE}): ${key}`,
              `  curl -i -H 'X-Api-Key: ${key}' '${url}/api/plans?discipline=running'`,
              `  curl -i '${url}/openapi.yaml'`,
              '',
            ].join('\n'),
          );
        },
      );
    });
}
