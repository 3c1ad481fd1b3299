/**
 * `catalog keys issue | rotate | revoke | list` (contract §5), on the local store file or on CloudFront
 * KeyValueStore. A key is printed once, alone on stdout, when it is issued; everything else goes to stderr,
 * except the listing (which never shows a key, only its id).
 */
import { type Command, Option } from 'commander';
import { z } from 'zod';
import { ConfigError } from '../../builder/errors.ts';
import { KEY_PREFIX, KeyIdInput, PartnerLabel } from '../../keys/keys.ts';
import type { ExpiryChange, KeyListing } from '../../keys/rules.ts';
import { type KeyValueStore, KvsArn } from '../../keys/store.ts';
import { Duration, When } from '../../keys/time.ts';
import { parseOptions } from '../options.ts';
import { DEFAULT_STORE } from './serve.ts';

/** The flags every key and CORS command takes to pick its store. */
const StoreFlags = z.object({
  store: z.string().trim().min(1, { error: 'must be a file path' }),
  kvsArn: KvsArn.optional(),
});

/** Adds `--store FILE` and `--kvs-arn ARN` (with their environment variables) to a command. */
export function addStoreOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--store <file>', 'local key-value store file, the one catalog serve reads')
        .env('CATALOG_STORE')
        .default(DEFAULT_STORE),
    )
    .addOption(
      new Option('--kvs-arn <arn>', 'CloudFront KeyValueStore ARN, instead of --store').env(
        'CATALOG_KVS_ARN',
      ),
    );
}

/** An open store, and how soon the gateway sees a change to it. */
export interface OpenedStore {
  readonly store: KeyValueStore;
  /** Said after a change: when the gateway applies it. */
  readonly takesEffect: string;
}

/**
 * Opens the store the flags name. A flag beats an environment variable, which beats the default file; the
 * same level naming both a file and a KVS ARN is an error. The KVS client is built here, once.
 */
export async function openStore(command: Command): Promise<OpenedStore> {
  const flags = parseOptions(command, StoreFlags);
  const warn = (message: string) => process.stderr.write(`catalog: warning: ${message}\n`);
  if (flags.kvsArn !== undefined) {
    const rank = (key: string) => ({ cli: 2, env: 1 })[command.getOptionValueSource(key) as string] ?? 0;
    const [storeRank, arnRank] = [rank('store'), rank('kvsArn')];
    if (storeRank === arnRank) {
      throw new ConfigError(
        storeRank === 2
          ? 'give --store FILE or --kvs-arn ARN, not both'
          : 'CATALOG_STORE and CATALOG_KVS_ARN are both set: unset one, or pass --store or --kvs-arn',
      );
    }
    if (arnRank > storeRank) {
      const { CloudFrontKeyValueStore, createKvsClient } = await import('../../keys/kvs-store.ts');
      return {
        store: new CloudFrontKeyValueStore(createKvsClient(), flags.kvsArn, { onWarning: warn }),
        takesEffect: 'CloudFront edges apply it within about a minute',
      };
    }
  }
  const { FileKeyValueStore } = await import('../../keys/file-store.ts');
  return {
    store: new FileKeyValueStore(flags.store, { onWarning: warn }),
    takesEffect: 'catalog serve applies it within a second',
  };
}

/** Writes one line to stderr: what a command did (stdout is kept for keys and listings). */
export const note = (line: string) => process.stderr.write(`${line}\n`);

/** `2026-11-21T13:25:56.123Z` → `2026-11-21T13:25:56Z`: the listing's readable form of a stored time. */
function shortTime(iso: string | null): string {
  return iso === null ? '-' : iso.replace(/\.\d+Z$/, 'Z');
}

function describeExpiry(change: ExpiryChange): string {
  return change.before !== undefined && change.before === change.after
    ? `key ${change.id} keeps its earlier expiry ${shortTime(change.after)}`
    : `key ${change.id} now expires ${shortTime(change.after)}`;
}

/** The readable `keys list` table: one row per key, never the key itself. */
export function formatKeyTable(rows: readonly KeyListing[]): string {
  const header = ['PARTNER', 'KEY ID', 'CREATED', 'EXPIRES', 'STATUS'];
  const cells = rows.map((row) => [
    row.partner ?? '?',
    row.id,
    shortTime(row.created),
    shortTime(row.expires),
    row.status,
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...cells.map((line) => (line[column] as string).length)),
  );
  return [header, ...cells]
    .map((line) =>
      line
        .map((cell, column) => cell.padEnd(widths[column] as number))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const partnerOption = () =>
  new Option('--partner <label>', 'partner label: a-z, 0-9 and -, up to 64').env('CATALOG_PARTNER');

/** ` (from CATALOG_X)` when an option's value came from the environment: a command says whose keys it touches. */
function fromEnv(command: Command, key: string): string {
  const option = command.options.find((o) => o.attributeName() === key);
  return command.getOptionValueSource(key) === 'env' && option?.envVar ? ` (from ${option.envVar})` : '';
}

export function registerKeys(program: Command): void {
  const keys = program
    .command('keys')
    .description('Manage partner API keys (only their SHA-256 hashes are stored).');

  const issue = addStoreOptions(
    keys
      .command('issue')
      .description('Issue a key for a partner and print it, alone, on stdout. It is shown only this once.')
      .addOption(partnerOption().makeOptionMandatory())
      .addOption(
        new Option('--expires <when>', 'ISO 8601 time, or a duration from now such as 90d').env(
          'CATALOG_EXPIRES',
        ),
      ),
  );
  issue.action(async () => {
    const now = new Date();
    const flags = parseOptions(issue, z.object({ partner: PartnerLabel, expires: When(now).optional() }));
    const { store, takesEffect } = await openStore(issue);
    const { issueKey } = await import('../../keys/manage.ts');
    const issued = await issueKey(store, {
      partner: flags.partner,
      now,
      ...(flags.expires ? { expires: flags.expires } : {}),
    });
    process.stdout.write(`${issued.key}\n`);
    const expiring = flags.expires ? `, expiring ${shortTime(flags.expires.toISOString())}` : '';
    note(
      `issued key ${issued.id} for ${flags.partner}${fromEnv(issue, 'partner')}${expiring} in ${store.name}; it is not shown again`,
    );
    note(`${takesEffect}.`);
  });

  const rotate = addStoreOptions(
    keys
      .command('rotate')
      .description(
        "Issue a new key for a partner (printed alone on stdout, once) and give the partner's current keys an expiry after the grace period.",
      )
      .addOption(partnerOption().makeOptionMandatory())
      .addOption(
        new Option('--grace <duration>', 'how long the old keys keep working, such as 7d')
          .env('CATALOG_GRACE')
          .makeOptionMandatory(),
      ),
  );
  rotate.action(async () => {
    const flags = parseOptions(rotate, z.object({ partner: PartnerLabel, grace: Duration }));
    const now = new Date();
    const { store, takesEffect } = await openStore(rotate);
    const { rotateKey } = await import('../../keys/manage.ts');
    const rotated = await rotateKey(store, { partner: flags.partner, graceMs: flags.grace, now });
    process.stdout.write(`${rotated.issued.key}\n`);
    note(
      `issued key ${rotated.issued.id} for ${flags.partner}${fromEnv(rotate, 'partner')} in ${store.name}; it is not shown again`,
    );
    for (const change of rotated.old) note(describeExpiry(change));
    note(`${takesEffect}.`);
  });

  const revoke = addStoreOptions(
    keys
      .command('revoke')
      .description("Revoke all of a partner's keys, or one key by id: now, or after a delay.")
      .addOption(partnerOption().conflicts('keyId'))
      .addOption(
        new Option('--key-id <id>', 'the key id keys list shows (never the key itself)').env(
          'CATALOG_KEY_ID',
        ),
      )
      .addOption(
        new Option('--after <duration>', 'keep the keys working this long, such as 1h').env('CATALOG_AFTER'),
      ),
  );
  revoke.action(async () => {
    const raw = revoke.opts() as { keyId?: unknown };
    if (typeof raw.keyId === 'string' && raw.keyId.includes(KEY_PREFIX)) {
      // Never echo it: this is a key. Its id is the first 12 hex digits of its SHA-256.
      throw new ConfigError(
        '--key-id: that is a key, not a key id; never put a key on a command line. Its id is the first 12 hex digits of its SHA-256 (see keys/README.md)',
      );
    }
    const flags = parseOptions(
      revoke,
      z.object({
        partner: PartnerLabel.optional(),
        keyId: KeyIdInput.optional(),
        after: Duration.optional(),
      }),
    );
    if (flags.partner === undefined && flags.keyId === undefined) {
      throw new ConfigError('give --partner LABEL or --key-id ID');
    }
    const now = new Date();
    const { store, takesEffect } = await openStore(revoke);
    const { revokeKeys } = await import('../../keys/manage.ts');
    const source = flags.partner !== undefined ? fromEnv(revoke, 'partner') : fromEnv(revoke, 'keyId');
    if (source)
      note(
        `revoking ${flags.partner !== undefined ? `partner ${flags.partner}` : `key ${flags.keyId}`}${source}`,
      );
    const target =
      flags.partner !== undefined ? { partner: flags.partner } : { keyId: flags.keyId as string };
    const outcome = await revokeKeys(store, {
      target,
      now,
      ...(flags.after !== undefined ? { afterMs: flags.after } : {}),
    });
    for (const key of outcome.removed) {
      note(
        `revoked key ${key.id}${key.record ? ` of ${key.record.partner}` : ''}: removed from ${store.name}`,
      );
    }
    for (const change of outcome.expiring) note(describeExpiry(change));
    if (outcome.removed.length === 0 && outcome.expiring.length === 0) {
      note('every matching key has expired already; nothing was changed');
    } else {
      note(`${takesEffect}.`);
    }
  });

  const list = addStoreOptions(
    keys
      .command('list')
      .description('List the keys: partner, key id, created, expires, status. Never shows a key.')
      .addOption(new Option('--json', 'print a JSON array instead of a table')),
  );
  list.action(async () => {
    const flags = parseOptions(list, z.object({ json: z.boolean().optional() }));
    const { store } = await openStore(list);
    const { listKeys } = await import('../../keys/manage.ts');
    const rows = await listKeys(store, new Date());
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    } else if (rows.length === 0) {
      note(`no keys in ${store.name}`);
    } else {
      process.stdout.write(`${formatKeyTable(rows)}\n`);
    }
  });
}
