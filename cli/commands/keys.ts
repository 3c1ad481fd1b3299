/**
 * `catalog keys issue | rotate | revoke | list` (docs/decisions.md#command-line), on the local store file or on CloudFront
 * KeyValueStore. A key is printed once, alone on stdout, when it is issued; everything else goes to stderr,
 * except the listing (which never shows a key, only its id).
 */
import type { Command } from 'commander';
import { ConfigError } from '../../contract/errors.ts';
import { KEY_PREFIX } from '../../keys/keys.ts';
import type { ExpiryChange, KeyListing } from '../../keys/rules.ts';
import type { KeyValueStore } from '../../keys/store.ts';
import { parseWhen } from '../../keys/time.ts';
import { type CliIO, noter, sayTarget, shortTime, table } from '../io.ts';
import { addSettings, givenBy, parseCommand, settingsCommand } from '../options.ts';

/**
 * Opens the store a command's `settings` name. A flag beats an environment variable, which beats the default
 * file (an ARN from `--deployment` counts as the deployment was given); the same level naming both a file and
 * a KVS ARN is an error. The KVS client is built here, once. A store file that does not exist is an error
 * unless `create` (only `keys issue` and `cors set` start a store: for any other, a missing file is a typo).
 */
export async function openStore(
  io: CliIO,
  command: Command,
  settings: {
    readonly store: string;
    readonly kvsArn?: string | undefined;
    readonly deployment?: string | undefined;
    readonly region?: string | undefined;
  },
  create = false,
  acting?: string,
) {
  const warn = (message: string) => io.stderr(`catalog: warning: ${message}\n`);
  // A command that changes the store says first which one (app/target.ts).
  const say = async (target: { kvsArn: string } | { store: string }) => {
    if (acting === undefined) return;
    const { describeTarget } = await import('../../app/target.ts');
    const where =
      'kvsArn' in target ? { ...target, deployment: settings.deployment, region: settings.region } : target;
    sayTarget(io, describeTarget(acting, where, io.env));
  };
  if (settings.kvsArn !== undefined) {
    const rank = (name: 'store' | 'kvsArn') => {
      const given =
        givenBy(command, name, io.env) ??
        (name === 'kvsArn' ? givenBy(command, 'deployment', io.env) : undefined);
      return given === 'flag' ? 2 : given === 'env' ? 1 : 0;
    };
    const [storeRank, arnRank] = [rank('store'), rank('kvsArn')];
    if (storeRank === arnRank) {
      throw new ConfigError(
        storeRank === 2
          ? 'give --store FILE or --kvs-arn ARN, not both'
          : 'CATALOG_STORE and CATALOG_KVS_ARN are both set: unset one, or pass --store or --kvs-arn',
      );
    }
    if (arnRank > storeRank) {
      await say({ kvsArn: settings.kvsArn });
      const [{ CloudFrontKeyValueStore }, { createKvsClient }] = await Promise.all([
        import('../../keys/kvs-store.ts'),
        import('../../app/clients.ts'),
      ]);
      return {
        store: new CloudFrontKeyValueStore(createKvsClient({ maxAttempts: 3 }), settings.kvsArn, {
          onWarning: warn,
        }) as KeyValueStore,
        takesEffect: 'CloudFront edges apply it within about a minute',
      };
    }
  }
  const { FileKeyValueStore, requireStoreFile } = await import('../../keys/file-store.ts');
  // Only keys issue and cors set start a store: for any other, a missing file is a typo, said alone.
  if (!create) await requireStoreFile(settings.store);
  await say({ store: settings.store });
  return {
    store: new FileKeyValueStore(settings.store, { onWarning: warn, create }) as KeyValueStore,
    takesEffect: 'catalog serve applies it from the next request',
  };
}

function describeExpiry(change: ExpiryChange): string {
  return change.before !== undefined && change.before === change.after
    ? `key ${change.id} keeps its earlier expiry ${shortTime(change.after)}`
    : `key ${change.id} now expires ${shortTime(change.after)}`;
}

/** A row of `keys list`; with `--usage`, when the key's partner was last seen (null: not within the window). */
type ListedKey = KeyListing & { readonly lastSeen?: string | null };

/** The readable `keys list` table: one row per key, never the key itself; with `usage`, the LAST SEEN column. */
export function formatKeyTable(rows: readonly ListedKey[], usage: boolean): string {
  const header = ['PARTNER', 'KEY ID', 'CREATED', 'EXPIRES', 'STATUS', ...(usage ? ['LAST SEEN'] : [])];
  const cells = rows.map((row) => [
    row.partner ?? '?',
    row.id,
    shortTime(row.created),
    shortTime(row.expires),
    row.status,
    ...(usage ? [shortTime(row.lastSeen ?? null)] : []),
  ]);
  return table([header, ...cells]);
}

/** ` (from CATALOG_X)` when a value came from the environment: a command says whose keys it touches. */
function fromEnv(io: CliIO, command: Command, name: 'partner' | 'keyId'): string {
  return givenBy(command, name, io.env) === 'env'
    ? ` (from ${name === 'partner' ? 'CATALOG_PARTNER' : 'CATALOG_KEY_ID'})`
    : '';
}

/** `--expires WHEN` relative to now: a time in the future, or a duration from now. */
function expiryOf(io: CliIO, command: Command, text: string | undefined, now: Date): Date | undefined {
  if (text === undefined) return undefined;
  const when = parseWhen(text, now);
  if (typeof when !== 'string') return when;
  const label = givenBy(command, 'expires', io.env) === 'env' ? 'CATALOG_EXPIRES' : '--expires';
  throw new ConfigError(`${label} ${JSON.stringify(text)}: ${when}`);
}

/** What each command here does, as its --help says. */
const HELP = {
  'keys-issue': 'Issue a key for a partner and print it, alone, on stdout. It is shown only this once.',
  'keys-rotate':
    "Issue a new key for a partner (printed alone on stdout, once) and give the partner's current keys an expiry after the grace period.",
  'keys-list':
    'List the keys: partner, key id, created, expires, status; with --usage, when the partner was last seen. Never shows a key.',
} as const;

export function registerKeys(program: Command, io: CliIO): void {
  const note = noter(io);
  const keys = program
    .command('keys')
    .description('Manage partner API keys (only their SHA-256 hashes are stored).');

  settingsCommand(keys, 'keys-issue', HELP['keys-issue'], io, async (settings, issue) => {
    const now = new Date();
    const expires = expiryOf(io, issue, settings.expires, now);
    const { store, takesEffect } = await openStore(io, issue, settings, true, 'keys issue');
    const { issueKey } = await import('../../keys/manage.ts');
    const issued = await issueKey(store, {
      partner: settings.partner,
      now,
      ...(expires ? { expires } : {}),
    });
    io.stdout(`${issued.key}\n`);
    const expiring = expires ? `, expiring ${shortTime(expires.toISOString())}` : '';
    note(
      `issued key ${issued.id} for ${settings.partner}${fromEnv(io, issue, 'partner')}${expiring} in ${store.name}; it is not shown again`,
    );
    note(`${takesEffect}.`);
  });

  settingsCommand(keys, 'keys-rotate', HELP['keys-rotate'], io, async (settings, rotate) => {
    const now = new Date();
    const { store, takesEffect } = await openStore(io, rotate, settings, false, 'keys rotate');
    const { rotateKey } = await import('../../keys/manage.ts');
    const rotated = await rotateKey(store, { partner: settings.partner, graceMs: settings.grace, now });
    io.stdout(`${rotated.issued.key}\n`);
    note(
      `issued key ${rotated.issued.id} for ${settings.partner}${fromEnv(io, rotate, 'partner')} in ${store.name}; it is not shown again`,
    );
    for (const change of rotated.old) note(describeExpiry(change));
    note(`${takesEffect}.`);
  });

  const revoke = keys
    .command('revoke')
    .description("Revoke all of a partner's keys, or one key by id: now, or after a delay.");
  addSettings(revoke, 'keys-revoke').action(async () => {
    const raw = revoke.opts() as { keyId?: unknown; partner?: unknown };
    // Never echo it: this is a key. Its id is the first 12 hex digits of its SHA-256.
    if (typeof raw.keyId === 'string' && raw.keyId.includes(KEY_PREFIX))
      throw new ConfigError(
        '--key-id: that is a key, not a key id; never put a key on a command line. Its id is the first 12 hex digits of its SHA-256 (see keys/README.md)',
      );
    if (givenBy(revoke, 'partner', io.env) === 'flag' && givenBy(revoke, 'keyId', io.env) === 'flag')
      throw new ConfigError("option '--partner <label>' cannot be used with option '--key-id <id>'");
    const settings = await parseCommand(revoke, 'keys-revoke', io.env);
    if (settings.partner === undefined && settings.keyId === undefined)
      throw new ConfigError('give --partner LABEL or --key-id ID');
    const now = new Date();
    const { store, takesEffect } = await openStore(io, revoke, settings, false, 'keys revoke');
    const { revokeKeys } = await import('../../keys/manage.ts');
    const { partner, keyId } = settings;
    const source = fromEnv(io, revoke, partner !== undefined ? 'partner' : 'keyId');
    if (source) note(`revoking ${partner !== undefined ? `partner ${partner}` : `key ${keyId}`}${source}`);
    const target = partner !== undefined ? { partner } : { keyId: keyId as string };
    const outcome = await revokeKeys(store, {
      target,
      now,
      ...(settings.after !== undefined ? { afterMs: settings.after } : {}),
    });
    for (const key of outcome.removed)
      note(
        `revoked key ${key.id}${key.record ? ` of ${key.record.partner}` : ''}: removed from ${store.name}`,
      );
    for (const change of outcome.expiring) note(describeExpiry(change));
    const changed = outcome.removed.length > 0 || outcome.expiring.length > 0;
    note(changed ? `${takesEffect}.` : 'every matching key has expired already; nothing was changed');
  });

  settingsCommand(keys, 'keys-list', HELP['keys-list'], io, async (settings, list) => {
    const { store } = await openStore(io, list, settings);
    const { listKeys } = await import('../../keys/manage.ts');
    const now = new Date();
    let rows: readonly ListedKey[] = await listKeys(store, now);
    if (settings.withUsage) {
      const { usageReport } = await import('../../app/usage.ts');
      const report = await usageReport(settings, {
        now,
        stdin: io.stdin,
        logs: async () => (await import('../../app/clients.ts')).createLogsClient(settings),
      });
      // Records name partners, never keys: a key shows when its partner was last seen (the monitoring
      // partner's, by the deployment's own checks).
      const seen = report.monitoring ? [...report.partners, report.monitoring] : report.partners;
      const lastSeen = new Map(seen.map((partner) => [partner.partner, partner.lastSeen]));
      rows = rows.map((row) => ({
        ...row,
        lastSeen: row.partner === null ? null : (lastSeen.get(row.partner) ?? null),
      }));
    }
    if (settings.json) io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
    else if (rows.length === 0) note(`no keys in ${store.name}`);
    else io.stdout(`${formatKeyTable(rows, settings.withUsage)}\n`);
  });
}
