import { type Command, Option } from 'commander';
import { z } from 'zod';
import { PartnerLabel } from '../../keys/keys.ts';
import { parseWhen } from '../../keys/time.ts';
import { parseOptions } from '../options.ts';
import { DEFAULT_STORE } from './serve.ts';

const IssueFlags = z.object({
  partner: PartnerLabel,
  expires: z.string().optional(),
  store: z.string().trim().min(1),
});

export function registerKeys(program: Command): void {
  const keys = program
    .command('keys')
    .description('Manage partner API keys (only their SHA-256 hashes are stored).');
  const issue = keys
    .command('issue')
    .description('Issue a key for a partner and print it, alone, on stdout. It is shown only this once.')
    .addOption(
      new Option('--partner <label>', 'partner label: a-z, 0-9 and -, up to 64').makeOptionMandatory(),
    )
    .addOption(new Option('--expires <when>', 'ISO 8601 time, or a duration from now such as 90d'))
    .addOption(
      new Option('--store <file>', 'local key-value store file').env('CATALOG_STORE').default(DEFAULT_STORE),
    );
  issue.action(async () => {
    const flags = parseOptions(issue, IssueFlags);
    const now = new Date();
    const { ConfigError } = await import('../../builder/errors.ts');
    let expires: Date | undefined;
    if (flags.expires !== undefined) {
      const when = parseWhen(flags.expires, now);
      if (typeof when === 'string')
        throw new ConfigError(`--expires ${JSON.stringify(flags.expires)}: ${when}`);
      expires = when;
    }
    const [{ FileKeyValueStore }, { issueKey }] = await Promise.all([
      import('../../keys/file-store.ts'),
      import('../../keys/manage.ts'),
    ]);
    const issued = await issueKey(new FileKeyValueStore(flags.store), {
      partner: flags.partner,
      now,
      ...(expires ? { expires } : {}),
    });
    process.stdout.write(`${issued.key}\n`);
    process.stderr.write(
      `issued key ${issued.id} for ${flags.partner}${expires ? `, expiring ${expires.toISOString()}` : ''}; it is not shown again\n`,
    );
  });
}
