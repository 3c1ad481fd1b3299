import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_BIN, ROOT, runCatalog, runProcess, withoutTarget } from '../../testing/cli.ts';
import { eventually, type LocalEdge, startLocalEdge, statusFor } from '../../testing/keys.ts';
import { useScratchDir } from '../../testing/scratch.ts';
import { TMPFS_IN_NAMESPACE } from '../../testing/script.ts';

const KEY_LINE = /^tpc_[A-Za-z0-9_-]{43}\n$/;

describe('catalog keys against a running catalog serve', () => {
  let edge: LocalEdge;
  beforeAll(async () => {
    edge = await startLocalEdge();
  });
  afterAll(() => edge?.stop());

  const keys = (...args: string[]) => runCatalog(['keys', ...args, '--store', edge.store]);

  /** Runs `keys issue` (or `rotate`) and returns the key it printed. */
  async function newKey(...args: string[]): Promise<string> {
    const result = await keys(...args);
    expect(result.stderr).not.toMatch(/^catalog: /m);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(KEY_LINE);
    return result.stdout.trim();
  }

  it('issues a key that gets 200 at once, printed alone on stdout, never in the store or on stderr', async () => {
    const result = await keys('issue', '--partner', 'acme');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(KEY_LINE);
    const key = result.stdout.trim();
    expect(result.stderr).toMatch(/^issued key [0-9a-f]{12} for acme in .*; it is not shown again$/m);
    expect(result.stderr).not.toContain(key);
    expect(await readFile(edge.store, 'utf8')).not.toContain(key);
    await eventually(async () => (await statusFor(edge.url, key)) === 200, 1_000, 'the new key is accepted');
  });

  it('revoking a partner makes its key fail with 401 within a second, and leaves other partners alone', async () => {
    const key = await newKey('issue', '--partner', 'hooli');
    const other = await newKey('issue', '--partner', 'globex');
    await eventually(async () => (await statusFor(edge.url, key)) === 200, 1_000, 'the key works before');
    const revoked = await keys('revoke', '--partner', 'hooli');
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toBe('');
    await eventually(
      async () => (await statusFor(edge.url, key)) === 401,
      1_000,
      'the revoked key is refused',
    );
    expect(await statusFor(edge.url, other)).toBe(200);
  });

  it('revoking one key by its id leaves the partner’s other key working', async () => {
    const first = await keys('issue', '--partner', 'initech');
    const second = await newKey('issue', '--partner', 'initech');
    const id = /issued key ([0-9a-f]{12})/.exec(first.stderr)?.[1] as string;
    expect((await keys('revoke', '--key-id', id)).code).toBe(0);
    await eventually(
      async () => (await statusFor(edge.url, first.stdout.trim())) === 401,
      1_000,
      'the revoked key is refused',
    );
    expect(await statusFor(edge.url, second)).toBe(200);
  });

  // The three tests that wait for a key's time to pass run side by side: their waits overlap.
  it.concurrent('a key issued with --expires 3s works until then and gets 401 once it has expired', async ({
    expect,
  }) => {
    const issuedAt = Date.now();
    const key = await newKey('issue', '--partner', 'umbrella', '--expires', '3s');
    await eventually(async () => (await statusFor(edge.url, key)) === 200, 1_000, 'the key works at first');
    await eventually(
      async () => (await statusFor(edge.url, key)) === 401,
      6_000,
      'the expired key is refused',
    );
    expect(Date.now() - issuedAt).toBeGreaterThanOrEqual(3_000);
  });

  it.concurrent('revoke --after 1s keeps the key working until then', async ({ expect }) => {
    const key = await newKey('issue', '--partner', 'soylent');
    const started = Date.now();
    const revoked = await keys('revoke', '--partner', 'soylent', '--after', '1s');
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toMatch(/^key [0-9a-f]{12} now expires /m);
    await eventually(
      async () => (await statusFor(edge.url, key)) === 401,
      4_000,
      'the key is refused after 1 s',
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it.concurrent('rotate: the old and the new key both work until the grace period ends, then only the new one', async ({
    expect,
  }) => {
    const old = await newKey('issue', '--partner', 'vandelay');
    const rotatedAt = Date.now();
    const fresh = await newKey('rotate', '--partner', 'vandelay', '--grace', '3s');
    expect(fresh).not.toBe(old);
    await eventually(
      async () => (await statusFor(edge.url, fresh)) === 200,
      1_000,
      'the new key is accepted',
    );
    expect(await statusFor(edge.url, old)).toBe(200);
    await eventually(
      async () => (await statusFor(edge.url, old)) === 401,
      6_000,
      'the old key is refused after 3 s',
    );
    expect(Date.now() - rotatedAt).toBeGreaterThanOrEqual(3_000);
    expect(await statusFor(edge.url, fresh)).toBe(200);
  });

  it('two keys issued at the same moment are both stored and both work', async () => {
    const [a, b, c] = await Promise.all([
      newKey('issue', '--partner', 'stark'),
      newKey('issue', '--partner', 'wayne'),
      newKey('issue', '--partner', 'stark'),
    ]);
    for (const key of [a, b, c] as string[]) {
      await eventually(
        async () => (await statusFor(edge.url, key)) === 200,
        1_000,
        'every concurrent key works',
      );
    }
    const listed = JSON.parse((await keys('list', '--json')).stdout) as { partner: string }[];
    expect(listed.filter((row) => row.partner === 'stark')).toHaveLength(2);
    expect(listed.filter((row) => row.partner === 'wayne')).toHaveLength(1);
  });

  it('lists partner, key id, created, expires and status in a table, and never a key', async () => {
    const key = await newKey('issue', '--partner', 'listed', '--expires', '30d');
    const result = await keys('list');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^PARTNER +KEY ID +CREATED +EXPIRES +STATUS$/);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^listed +[0-9a-f]{12} +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +expiring$/,
      ),
    );
    expect(result.stdout).not.toContain(key);
    expect(result.stdout).not.toMatch(/tpc_/);
  });

  it('refuses to revoke a partner that has no keys, and changes nothing', async () => {
    const before = await readFile(edge.store, 'utf8');
    const result = await keys('revoke', '--partner', 'nobody');
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `keys revoke acts on the local store ${edge.store}\ncatalog: partner nobody has no keys\n`,
    });
    expect(await readFile(edge.store, 'utf8')).toBe(before);
  });

  it('refuses to rotate a partner that has no keys', async () => {
    const result = await keys('rotate', '--partner', 'nobody', '--grace', '1d');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `keys rotate acts on the local store ${edge.store}\ncatalog: partner nobody has no keys to rotate; issue a first key with catalog keys issue --partner nobody\n`,
    );
  });

  it.each([
    [['issue', '--partner', 'Acme'], '--partner "Acme": must be 1–64 lowercase letters, digits or hyphens'],
    [['issue', '--partner', 'a'.repeat(65)], `--partner "${'a'.repeat(65)}": must be 1–64 lowercase letters`],
    [
      ['issue', '--partner', 'acme', '--expires', '2020-01-01'],
      '--expires "2020-01-01": must be in the future',
    ],
    [['issue', '--partner', 'acme', '--expires', 'soon'], '--expires "soon": must be an ISO 8601 time'],
    [
      ['rotate', '--partner', 'acme', '--grace', '7'],
      '--grace "7": must be a number and a unit ms, s, m, h or d',
    ],
    [['revoke', '--partner', 'acme', '--after', '0h'], '--after "0h": must be longer than zero'],
    [['revoke', '--key-id', 'xyz'], '--key-id "xyz": must be a key id as keys list shows it'],
    [['revoke'], 'give --partner LABEL or --key-id ID'],
    [['list', '--kvs-arn', 'arn:nope'], '--kvs-arn "arn:nope": must be a KeyValueStore ARN'],
  ])('refuses %j naming the flag and the value', async (args, message) => {
    const before = await readFile(edge.store, 'utf8');
    const result = await keys(...args);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.startsWith(`catalog: ${message}`)).toBe(true);
    expect(result.stderr.split('\n')).toHaveLength(2);
    expect(await readFile(edge.store, 'utf8')).toBe(before);
  });

  it('never echoes a key passed by mistake to --key-id', async () => {
    const key = await newKey('issue', '--partner', 'careless');
    const result = await keys('revoke', '--key-id', key);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^catalog: --key-id: that is a key, not a key id/);
    expect(result.stderr).not.toContain(key);
    await eventually(async () => (await statusFor(edge.url, key)) === 200, 1_000, 'the key still works');
  });

  it('takes the store from CATALOG_STORE, and a --store flag over CATALOG_KVS_ARN', async () => {
    const issued = await runCatalog(['keys', 'issue', '--partner', 'envvar'], {
      env: { CATALOG_STORE: edge.store },
    });
    expect(issued.code).toBe(0);
    const fromEnv = await runCatalog(['keys', 'list', '--json'], { env: { CATALOG_STORE: edge.store } });
    expect(JSON.parse(fromEnv.stdout)).toContainEqual(expect.objectContaining({ partner: 'envvar' }));
    const arn = 'arn:aws:cloudfront::123456789012:key-value-store/abc';
    const flagWins = await runCatalog(['keys', 'list', '--json', '--store', edge.store], {
      env: { CATALOG_KVS_ARN: arn },
    });
    expect(flagWins.stdout).toBe(fromEnv.stdout);
    const both = await runCatalog(['keys', 'list'], {
      env: { CATALOG_STORE: edge.store, CATALOG_KVS_ARN: arn },
    });
    expect(both.stderr).toBe(
      'catalog: CATALOG_STORE and CATALOG_KVS_ARN are both set: unset one, or pass --store or --kvs-arn\n',
    );
  });

  it('refuses --store and --kvs-arn together', async () => {
    const result = await keys('list', '--kvs-arn', 'arn:aws:cloudfront::123456789012:key-value-store/abc');
    expect(result).toMatchObject({
      code: 1,
      stderr: 'catalog: give --store FILE or --kvs-arn ARN, not both\n',
    });
  });
});

describe('a store file that does not exist', () => {
  const scratch = useScratchDir({ prefix: 'catalog-keys-missing-' });

  it('is an error for every command but keys issue and cors set, which create it', async () => {
    const store = join(scratch.dir, 'nonexistent', 'kvs.json');
    const origin = join(scratch.dir, 'origin');
    const refused = `store ${store} does not exist; check the path (catalog keys issue or cors set creates a store, npm start creates .catalog/kvs.json)`;
    for (const args of [
      ['keys', 'list'],
      ['keys', 'list', '--json'],
      ['keys', 'rotate', '--partner', 'acme', '--grace', '1d'],
      ['keys', 'revoke', '--partner', 'acme'],
      ['cors', 'show'],
      ['cors', 'clear'],
      ['serve', '--origin', origin, '--port', '0'],
      ['status', '--origin', origin],
    ]) {
      const result = await runCatalog([...args, '--store', store]);
      expect({ args, ...result }).toEqual({ args, code: 1, stdout: '', stderr: `catalog: ${refused}\n` });
    }
    for (const args of [
      [
        'publish',
        '--source',
        join(ROOT, 'fixtures', 'plans.json'),
        '--base-url',
        'https://plans.example.com',
      ],
      ['builds'],
      ['rollback'],
      ['unpin'],
    ]) {
      const result = await runCatalog([...args, '--origin', origin, '--store', store]);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr, args.join(' ')).toMatch(
        new RegExp(`^catalog: .*${refused.replace(/[.()]/g, '\\$&')}.*\\n$`),
      );
    }
    await expect(stat(join(scratch.dir, 'nonexistent'))).rejects.toMatchObject({ code: 'ENOENT' });

    expect((await runCatalog(['cors', 'set', 'https://a.example', '--store', store])).code).toBe(0);
    await runCatalog(['cors', 'clear', '--store', store]);
    const other = join(scratch.dir, 'other', 'kvs.json');
    expect((await runCatalog(['keys', 'issue', '--partner', 'acme', '--store', other])).code).toBe(0);
    const listed = await runCatalog(['keys', 'list', '--json', '--store', other]);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ partner: 'acme' })]);
  });
});

describe('keys issue on a full disk', () => {
  const scratch = useScratchDir({ prefix: 'catalog-keys-full-' });

  it.skipIf(!TMPFS_IN_NAMESPACE)(
    'fails in one line, leaves the store as it was and no lock or temporary file (a real 64 KiB tmpfs, filled)',
    async () => {
      const disk = join(scratch.dir, 'disk');
      await mkdir(disk);
      // In a mount namespace of its own (unshare -rm): the store on a 64 KiB tmpfs, a first key while
      // there is room, then the disk filled, then a second key.
      const script = [
        'set -e',
        'mount -t tmpfs -o size=64k tmpfs "$1"',
        '"$2" "$3" keys issue --partner first --store "$1/kvs.json" > /dev/null 2>&1',
        'cat "$1/kvs.json" > "$4"',
        'dd if=/dev/zero of="$1/fill" bs=4096 > /dev/null 2>&1 || true',
        'set +e',
        '"$2" "$3" keys issue --partner second --store "$1/kvs.json"',
        'echo "exit $?"',
        'ls -A "$1"',
        'cmp -s "$1/kvs.json" "$4" && echo unchanged',
      ].join('\n');
      const result = await runProcess(
        'unshare',
        ['-rm', 'sh', '-c', script, 'sh', disk, process.execPath, CATALOG_BIN, join(scratch.dir, 'before')],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: scratch.dir },
        },
      );
      expect(result.stdout).toBe('exit 1\nfill\nkvs.json\nunchanged\n');
      expect(withoutTarget(result.stderr)).toMatch(
        /^catalog: cannot (lock|write) .*kvs\.json: ENOSPC: no space left on device[^\n]*\n$/,
      );
    },
  );
});
