import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCatalog, scratchDir } from '../testing/cli.ts';
import { originProblem, setCorsOrigin, showCorsOrigin } from './cors.ts';
import { FileKeyValueStore } from './file-store.ts';
import { StoreLimitError } from './store.ts';

describe('a CORS origin', () => {
  it.each([
    'https://partner.example',
    'http://localhost:3000',
    'https://app.partner.example:8443',
    'http://127.0.0.1:8080',
    'http://[::1]:8080',
    'https://xn--bcher-kva.example',
  ])('accepts %s', (origin) => {
    expect(originProblem(origin)).toBeUndefined();
  });

  it.each([
    ['*', 'must be one exact origin; * (any origin) is never allowed'],
    ['null', 'the null origin (sandboxed pages, files) is never allowed'],
    ['https://partner.example/', 'must not end with a slash: https://partner.example'],
    [
      'https://partner.example/app',
      'must be scheme://host[:port] with no path, query or fragment: https://partner.example',
    ],
    [
      'https://partner.example?x=1',
      'must be scheme://host[:port] with no path, query or fragment: https://partner.example',
    ],
    [
      'https://partner.example#top',
      'must be scheme://host[:port] with no path, query or fragment: https://partner.example',
    ],
    ['ftp://partner.example', 'must start with https:// or http://'],
    ['https://user:pw@partner.example', 'must not hold a user name or password'],
    ['partner.example', 'must be an origin: scheme://host[:port], such as https://partner.example'],
    ['', 'must be an origin: scheme://host[:port], such as https://partner.example'],
    [
      'https://Partner.Example',
      'must be written exactly as browsers send it (lowercase, no default port, punycode host): https://partner.example',
    ],
    [
      'https://partner.example:443',
      'must be written exactly as browsers send it (lowercase, no default port, punycode host): https://partner.example',
    ],
    [
      'https://bücher.example',
      'must be written exactly as browsers send it (lowercase, no default port, punycode host): https://xn--bcher-kva.example',
    ],
    [
      'https://*.a.com',
      'must be one exact origin; a wildcard (*) is never allowed, name the one origin the pages are served from',
    ],
    [
      'https://a.*.com',
      'must be one exact origin; a wildcard (*) is never allowed, name the one origin the pages are served from',
    ],
    [
      'https://*',
      'must be one exact origin; a wildcard (*) is never allowed, name the one origin the pages are served from',
    ],
    [
      'https://*.a.com/',
      'must be one exact origin; a wildcard (*) is never allowed, name the one origin the pages are served from',
    ],
    ['https://a.com.', 'must not end the host with a dot (browsers send the name without it): https://a.com'],
    [
      'https://a.com..',
      'must not end the host with a dot (browsers send the name without it): https://a.com',
    ],
    [
      'https://A.com.:8443',
      'must not end the host with a dot (browsers send the name without it): https://a.com:8443',
    ],
    [
      'https://a.com./',
      'must not end the host with a dot (browsers send the name without it): https://a.com',
    ],
    ['https://a..com', 'must have a host name with no empty label (no two dots in a row, no leading dot)'],
    ['https://.a.com', 'must have a host name with no empty label (no two dots in a row, no leading dot)'],
    ['https://a.ex\u0001ample', 'must be an origin: scheme://host[:port], such as https://partner.example'],
    [
      'https://a.example\u0001',
      'must be written exactly as browsers send it (lowercase, no default port, punycode host): https://a.example',
    ],
  ])('refuses %j: %s', (origin, problem) => {
    expect(originProblem(origin)).toBe(problem);
  });
});

describe('the CORS origin in a store', () => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await scratchDir('catalog-cors-'));
  });
  afterEach(() => remove());

  it('is set, replaced by the next one, shown, and cleared', async () => {
    const store = new FileKeyValueStore(join(dir, 'kvs.json'), { create: true });
    expect(await showCorsOrigin(store)).toBeUndefined();
    expect(await setCorsOrigin(store, 'https://a.example')).toBeUndefined();
    expect(await setCorsOrigin(store, 'https://b.example')).toBe('https://a.example');
    expect(await store.read()).toEqual(new Map([['cors:origin', 'https://b.example']]));
    expect(await showCorsOrigin(store)).toBe('https://b.example');
    expect(await setCorsOrigin(store)).toBe('https://b.example');
    expect(await setCorsOrigin(store)).toBeUndefined();
    expect(await store.read()).toEqual(new Map());
  });

  it('refuses an invalid origin before touching the store', async () => {
    const store = new FileKeyValueStore(join(dir, 'kvs.json'), { create: true });
    await expect(setCorsOrigin(store, 'https://a.example/')).rejects.toThrow(
      'origin "https://a.example/": must not end with a slash: https://a.example',
    );
    await expect(readFile(join(dir, 'kvs.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses an origin over the 1 KB value limit, warns from 80%, and writes nothing when refusing', async () => {
    const warnings: string[] = [];
    const path = join(dir, 'kvs.json');
    const store = new FileKeyValueStore(path, {
      create: true,
      onWarning: (message) => warnings.push(message),
    });
    // Hostnames of 49-letter labels: `https://` + 900 characters is 908 bytes, 88% of 1 KB.
    const origin = (length: number) =>
      `https://${'a'
        .repeat(49)
        .concat('.')
        .repeat(30)
        .slice(0, length - 1)}a`;
    await setCorsOrigin(store, origin(900));
    expect(warnings).toEqual([`${path}: the value of cors:origin is 908 bytes, 88% of the 1 KB limit`]);
    const before = await readFile(path, 'utf8');
    await expect(setCorsOrigin(store, origin(1100))).rejects.toThrow(StoreLimitError);
    await expect(setCorsOrigin(store, origin(1100))).rejects.toThrow(
      /over the 1 KB \(1024-byte\) limit \(CloudFront KeyValueStore limits\); nothing was changed$/,
    );
    expect(await readFile(path, 'utf8')).toBe(before);
  });
});

describe('catalog cors set', () => {
  let dir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, remove } = await scratchDir('catalog-cors-cli-'));
  });
  afterEach(() => remove());

  it.each([
    [
      'https://a.com.',
      'catalog: ORIGIN "https://a.com.": must not end the host with a dot (browsers send the name without it): https://a.com\n',
    ],
    [
      'https://*.a.com',
      'catalog: ORIGIN "https://*.a.com": must be one exact origin; a wildcard (*) is never allowed, name the one origin the pages are served from\n',
    ],
  ])('refuses %s with exit code 1 and one line, and writes nothing', async (origin, message) => {
    const store = join(dir, 'kvs.json');
    const result = await runCatalog(['cors', 'set', origin, '--store', store]);
    expect(result).toEqual({ code: 1, stdout: '', stderr: message });
    await expect(readFile(store)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
