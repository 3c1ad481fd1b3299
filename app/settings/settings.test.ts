/**
 * One declaration per setting: the command line, the builder Lambda and the CDK app are checked against the
 * registry, so no entry point can grow a setting of its own or lose one.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../builder/sources/redact.ts';
import { renderSettingRefs } from '../../contract/errors.ts';
import { configFromContext } from '../../infra/config.ts';
import { ROOT, repositoryFiles, runCatalog } from '../../testing/cli.ts';
import { withCurrentTable } from '../../tools/docs.ts';
import { lambdaEnvironment, parseLambdaEnvironment } from './environment.ts';
import {
  COMMANDS,
  envOf,
  flagOf,
  namesIn,
  renderMessage,
  SETTINGS,
  type SettingName,
  settingLabel,
} from './index.ts';

/** The words of a command as typed (`keys-issue` is `keys issue`). */
const words = (command: string) =>
  command.startsWith('keys-') || command.startsWith('cors-') ? command.split('-') : [command];

describe('the command line', () => {
  it.each(COMMANDS.map((command) => [command]))(
    '%s offers exactly the flags and variables of the settings it reads',
    async (command) => {
      const help = await runCatalog([...words(command), '--help']);
      expect(help.code, help.stderr).toBe(0);
      const offered = new Set([...help.stdout.matchAll(/(?:^|[\s,(])(--[a-z][a-z0-9-]*)/g)].map((m) => m[1]));
      offered.delete('--help');
      const expected = new Set<string>();
      for (const name of namesIn(command)) {
        const flag = flagOf(name);
        if (flag !== undefined) expected.add(flag);
        const env = envOf(name);
        if (env !== undefined) expect(help.stdout, `${command} --help names ${env}`).toContain(env);
      }
      expect([...offered].sort()).toEqual([...expected].sort());
    },
  );
});

describe('a secret setting', () => {
  it('is read from its variable alone, never a flag (a flag shows in ps and in shell history)', () => {
    const secrets = (Object.keys(SETTINGS) as SettingName[]).filter(
      (name) => (SETTINGS[name] as { secret?: boolean }).secret,
    );
    expect(secrets).toEqual(
      expect.arrayContaining(['sourceToken', 'key', 'expiredKey', 'revokedKey', 'partnerKey', 'checkKey']),
    );
    for (const name of secrets) {
      expect(flagOf(name), name).toBeUndefined();
      expect(envOf(name), name).toMatch(/^CATALOG_[A-Z_]+$/);
    }
  });
});

describe('a URL setting', () => {
  it('is echoed through the one URL redaction, whatever its name', () => {
    const urls = (Object.keys(SETTINGS) as SettingName[]).filter((name) =>
      /url|source/.test(SETTINGS[name].kind.valueName ?? ''),
    );
    expect(urls).toEqual(
      expect.arrayContaining(['source', 'baseUrl', 'webBaseUrl', 'endpoint', 'upstream', 'notify']),
    );
    for (const name of urls) expect((SETTINGS[name] as { redact?: unknown }).redact, name).toBe(redactUrl);
  });
});

describe('the builder Lambda', () => {
  const required = {
    CATALOG_BUCKET: 'catalog-origin',
    CATALOG_KVS_ARN: 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0',
    CATALOG_BASE_URL: 'https://plans.example.com',
    CATALOG_SOURCE: 'https://source.example.com/plans',
    CATALOG_CONTACT_ADDRESS: 'api-keys@trainingplans.app',
  };

  it('reads every setting declared for it, from the variable the declaration names', () => {
    const settings = parseLambdaEnvironment({
      ...required,
      CATALOG_SOURCE_RELATION: 'reporting.plans',
      CATALOG_SOURCE_STATEMENT_TIMEOUT: '45s',
      CATALOG_SOURCE_RETRIES: '7',
      CATALOG_KEEP: '9',
    });
    expect(settings).toMatchObject({
      sourceRelation: 'reporting.plans',
      sourceStatementTimeout: 45_000,
      sourceRetries: 7,
      keepBuilds: 9,
    });
    for (const name of namesIn('lambda')) expect(envOf(name), name).toMatch(/^CATALOG_[A-Z0-9_]+$/);
  });

  it('refuses an http:// base URL, loopback or not: the Lambda publishes to AWS', () => {
    expect(() => parseLambdaEnvironment({ ...required, CATALOG_BASE_URL: 'http://127.0.0.1:8787' })).toThrow(
      'CATALOG_BASE_URL "http://127.0.0.1:8787": must be https:// (partners render webUrl as a link; the distribution serves HTTPS only)',
    );
  });

  it('refuses a contact address at a domain reserved for examples: it reaches no partner', () => {
    expect(() =>
      parseLambdaEnvironment({ ...required, CATALOG_CONTACT_ADDRESS: 'api-keys@example.com' }),
    ).toThrow(
      'CATALOG_CONTACT_ADDRESS "api-keys@example.com": is at example.com, a domain reserved for examples that reaches no one: give the address partners ask for keys at',
    );
  });

  it('refuses, by name, a CATALOG_ variable it does not read', () => {
    expect(() =>
      parseLambdaEnvironment({ ...required, CATALOG_SOURCE_RELATON: 'x', CATALOG_STORE: 'kvs.json' }),
    ).toThrow(
      'CATALOG_SOURCE_RELATON: is not a setting of the builder Lambda; CATALOG_STORE: is not a setting of the builder Lambda',
    );
  });

  it('reads back every value the stack can write, exactly', () => {
    const written = lambdaEnvironment({
      bucket: 'catalog-origin',
      kvsArn: 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0',
      baseUrl: 'https://plans.example.com',
      contactAddress: 'https://partners.trainingplans.app/keys',
      webBaseUrl: 'https://www.example.com/training',
      source: 'postgres://db.internal/plans',
      appScheme: 'myapp',
      skipInvalid: true,
      allowEmpty: true,
      minRatio: 0.25,
      keepBuilds: 3,
      s3PathStyle: true,
      maxAttempts: 2,
      sourceRelation: '"Reporting"."Plans"',
      sourceStatementTimeout: 90_000,
      sourceConnectTimeout: 1_500,
      sourceHeadersTimeout: 2_000,
      sourceBodyTimeout: 3_000,
      sourceMaxBytes: 64 * 1024 * 1024,
      sourceRetries: 0,
      monitoringKeySecretArn:
        'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog/monitoring-AbCdEf',
      propagationMaxWait: 90_000,
      propagationInterval: 2_500,
    });
    const read = parseLambdaEnvironment(written);
    expect(read).toMatchObject({
      source: 'postgres://db.internal/plans',
      contactAddress: 'https://partners.trainingplans.app/keys',
      webBaseUrl: 'https://www.example.com/training',
      appScheme: 'myapp',
      skipInvalid: true,
      allowEmpty: true,
      minRatio: 0.25,
      keepBuilds: 3,
      s3PathStyle: true,
      maxAttempts: 2,
      sourceRelation: '"Reporting"."Plans"',
      sourceStatementTimeout: 90_000,
      sourceConnectTimeout: 1_500,
      sourceHeadersTimeout: 2_000,
      sourceBodyTimeout: 3_000,
      sourceMaxBytes: 64 * 1024 * 1024,
      sourceRetries: 0,
      monitoringKeySecretArn:
        'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog/monitoring-AbCdEf',
      propagationMaxWait: 90_000,
      propagationInterval: 2_500,
    });
    // Every setting the Lambda reads (but the secret ARN, exclusive with the source) went through.
    const missing = namesIn('lambda').filter(
      (name) => name !== 'sourceSecretArn' && !((envOf(name) ?? '') in written),
    );
    expect(missing).toEqual([]);
  });
});

describe('the CDK app', () => {
  it('takes a deployment file’s settings by the names declared for it, and no other', async () => {
    const root = await mkdtemp(join(tmpdir(), 'catalog-deployments-'));
    try {
      await mkdir(join(root, 'infra', 'deployments'), { recursive: true });
      const every = Object.fromEntries(namesIn('cdk').map((name) => [name, null]));
      const file = { ...every, deployment: 'Lab', region: 'eu-west-1', contactAddress: 'keys@lab.dev' };
      await writeFile(join(root, 'infra', 'deployments', 'Lab.json'), JSON.stringify(file));
      expect(configFromContext({ deployment: 'Lab' }, root).stackName).toBe('Lab');
      await writeFile(join(root, 'infra', 'deployments', 'Lab.json'), JSON.stringify({ ...file, out: 'x' }));
      expect(() => configFromContext({ deployment: 'Lab' }, root)).toThrow(
        'out: is not a setting of a deployment',
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('kinds of values', () => {
  it('reads retries from 0 to 10, as text or a number', () => {
    const retries = SETTINGS.sourceRetries.kind.schema;
    expect([retries.parse('0'), retries.parse(10)]).toEqual([0, 10]);
    for (const bad of ['11', '-1', 3.5, 'three'])
      expect(retries.safeParse(bad).success, String(bad)).toBe(false);
  });

  it('reads a switch from 1/true/yes/on and 0/false/no/off, and nothing else', () => {
    const flag = SETTINGS.skipInvalid.kind.schema;
    expect(['1', 'TRUE', 'yes', 'on', true].map((v) => flag.parse(v))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['0', 'false', 'No', 'off', false].map((v) => flag.parse(v))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(flag.safeParse('maybe').success).toBe(false);
  });
});

describe('messages that name a setting', () => {
  it('name it as each entry point takes it', () => {
    const message = 'raise \u2039setting:sourceMaxBytes\u203a';
    expect(renderMessage(message, 'cli')).toBe('raise --source-max-bytes');
    expect(renderMessage(message, 'lambda')).toBe('raise CATALOG_SOURCE_MAX_BYTES');
    expect(renderMessage(message, 'cdk')).toBe('raise sourceMaxBytes');
    expect(settingLabel('sourceToken', 'cli')).toBe('CATALOG_SOURCE_TOKEN');
  });

  it('only ever name declared settings', async () => {
    const files = (await repositoryFiles()).filter((file) => file.endsWith('.ts'));
    const named = new Set<string>();
    for (const file of files) {
      const text = await readFile(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/settingRef\('([A-Za-z0-9]+)'\)/g)) named.add(match[1] ?? '');
      renderSettingRefs(text, (name) => {
        named.add(name);
        return '';
      });
    }
    expect(named.size).toBeGreaterThan(5);
    for (const name of named) expect(Object.keys(SETTINGS), name).toContain(name as SettingName);
  });
});

describe('docs/settings.md', () => {
  it('lists every setting as declared (npm run docs rewrites it)', async () => {
    const markdown = await readFile(join(ROOT, 'docs', 'settings.md'), 'utf8');
    expect(withCurrentTable(markdown)).toBe(markdown);
    for (const name of Object.keys(SETTINGS)) expect(markdown).toContain(`| \`${name}\` |`);
  });

  it('says in one row what each command reads, by mode', async () => {
    const markdown = await readFile(join(ROOT, 'docs', 'settings.md'), 'utf8');
    expect(markdown).toContain('| catalog cors show |  | `store` | `deployment`, `region`, `kvsArn` |');
    expect(markdown).toMatch(
      /^\| catalog publish \| `source`, `baseUrl` \| `contactAddress`, `appScheme`, .*`unpin`, `force`/m,
    );
    for (const command of COMMANDS)
      expect(markdown).toMatch(new RegExp(`^\\| catalog ${words(command).join(' ')} \\|`, 'm'));
  });
});

describe('the layers', () => {
  it('never import the command line from outside it', async () => {
    const files = (await repositoryFiles()).filter(
      (file) => /\.(ts|js|mjs)$/.test(file) && !file.startsWith('cli/') && !file.startsWith('bin/'),
    );
    const offenders: string[] = [];
    for (const file of files) {
      const text = await readFile(join(ROOT, file), 'utf8');
      if (/from ['"](\.\.\/)+cli\//.test(text) || /import\(['"](\.\.\/)+cli\//.test(text))
        offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
