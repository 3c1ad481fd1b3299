import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { KVS_CORS_ORIGIN } from '../contract/index.ts';
import { FakeKvs, kvsClientFor } from '../testing/kvs.ts';
import { refusedPort } from '../testing/postgres.ts';
import { setCorsOrigin } from './cors.ts';
import { hashKey, storeKeyOf } from './keys.ts';
import { CloudFrontKeyValueStore } from './kvs-store.ts';
import { issueKey, listKeys, revokeKeys, rotateKey } from './manage.ts';
import { StoreError, StoreLimitError } from './store.ts';

const ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';
const NOW = new Date('2026-06-01T12:00:00.000Z');
const DAY = 86_400_000;

describe('the CloudFront KeyValueStore backend', () => {
  const fake = new FakeKvs(ARN);
  let port: number;
  let store: CloudFrontKeyValueStore;
  beforeAll(async () => {
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    port = (fake.server.address() as AddressInfo).port;
    store = new CloudFrontKeyValueStore(kvsClientFor(port), ARN);
  });
  afterAll(() => new Promise<void>((resolve) => fake.server.close(() => resolve())));
  beforeEach(() => {
    fake.entries = new Map();
    fake.version = 1;
    fake.requests = [];
    fake.beforeUpdate = undefined;
    fake.failUpdatesWith = undefined;
    fake.conflict = { status: 409, type: 'ConflictException' };
  });

  it('signs every request with SigV4A for all regions', async () => {
    await issueKey(store, { partner: 'acme', now: NOW });
    expect(fake.requests).toHaveLength(3);
    for (const request of fake.requests) {
      expect(request.headers.authorization).toMatch(
        /^AWS4-ECDSA-P256-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/cloudfront-keyvaluestore\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*x-amz-region-set/,
      );
      expect(request.headers['x-amz-region-set']).toBe('*');
      expect(request.headers.host).toBe(`123456789012.kvs.test:${port}`);
    }
  });

  it('issues a key with one UpdateKeys that carries the ETag from DescribeKeyValueStore and only the new key', async () => {
    fake.entries.set(KVS_CORS_ORIGIN, 'https://partner.example');
    fake.version = 7;
    const issued = await issueKey(store, {
      partner: 'acme',
      now: NOW,
      expires: new Date(NOW.getTime() + DAY),
    });
    expect(fake.calls()).toEqual(['describe', 'list', 'update']);
    expect(fake.requests[2]?.headers['if-match']).toBe('ETAG7');
    expect(fake.updates()).toEqual([
      {
        Puts: [
          {
            Key: storeKeyOf(hashKey(issued.key)),
            Value: JSON.stringify({
              partner: 'acme',
              created: NOW.toISOString(),
              expires: '2026-06-02T12:00:00.000Z',
            }),
          },
        ],
      },
    ]);
    expect(fake.requests.map((r) => r.body).join('')).not.toContain(issued.key);
  });

  it('reads every page of ListKeys', async () => {
    for (const partner of ['a', 'b', 'c', 'd', 'e']) await issueKey(store, { partner, now: NOW });
    fake.requests = [];
    const rows = await listKeys(store, NOW);
    expect(rows.map((row) => row.partner)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(fake.requests.map((r) => r.query.get('NextToken'))).toEqual([null, '2', '4']);
  });

  it('rotates in one batch: the new key and the old one with its expiry', async () => {
    const old = await issueKey(store, { partner: 'acme', now: new Date(NOW.getTime() - DAY) });
    fake.requests = [];
    const rotated = await rotateKey(store, { partner: 'acme', graceMs: 7 * DAY, now: NOW });
    expect(fake.updates()).toEqual([
      {
        Puts: [
          {
            Key: storeKeyOf(hashKey(old.key)),
            Value: JSON.stringify({ ...old.record, expires: '2026-06-08T12:00:00.000Z' }),
          },
          { Key: storeKeyOf(hashKey(rotated.issued.key)), Value: JSON.stringify(rotated.issued.record) },
        ].sort((a, b) => (a.Key < b.Key ? -1 : 1)),
      },
    ]);
  });

  it('revokes with exactly the deletes of the partner, and sets and clears CORS with one put or delete', async () => {
    const a = await issueKey(store, { partner: 'acme', now: NOW });
    const b = await issueKey(store, { partner: 'acme', now: NOW });
    await issueKey(store, { partner: 'globex', now: NOW });
    fake.requests = [];
    await revokeKeys(store, { target: { partner: 'acme' }, now: NOW });
    await setCorsOrigin(store, 'https://partner.example');
    await setCorsOrigin(store);
    expect(fake.updates()).toEqual([
      {
        Deletes: [{ Key: storeKeyOf(hashKey(a.key)) }, { Key: storeKeyOf(hashKey(b.key)) }].sort((x, y) =>
          x.Key < y.Key ? -1 : 1,
        ),
      },
      { Puts: [{ Key: KVS_CORS_ORIGIN, Value: 'https://partner.example' }] },
      { Deletes: [{ Key: KVS_CORS_ORIGIN }] },
    ]);
  });

  it('on a 412 conflict re-reads the store and retries, keeping the other writer’s change', async () => {
    fake.conflict = { status: 412, type: 'PreconditionFailed' };
    fake.beforeUpdate = () => {
      fake.entries.set(KVS_CORS_ORIGIN, 'https://other-writer.example');
      fake.version += 1;
    };
    const issued = await issueKey(store, { partner: 'acme', now: NOW });
    expect(fake.calls()).toEqual(['describe', 'list', 'update', 'describe', 'list', 'update']);
    expect(fake.requests.filter((r) => r.method === 'POST').map((r) => r.headers['if-match'])).toEqual([
      'ETAG1',
      'ETAG2',
    ]);
    expect(fake.updates()[1]).toEqual(fake.updates()[0]);
    expect(fake.entries.get(KVS_CORS_ORIGIN)).toBe('https://other-writer.example');
    expect(fake.entries.has(storeKeyOf(hashKey(issued.key)))).toBe(true);
  });

  it('also retries a 409 ConflictException, and gives up after a bounded number of attempts', async () => {
    fake.failUpdatesWith = { status: 409, type: 'ConflictException' };
    // The pauses between attempts pass on a fast clock.
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const clock = setInterval(() => vi.advanceTimersByTime(1_000), 10);
    const issuing = issueKey(store, { partner: 'acme', now: NOW });
    await issuing.catch(() => {});
    clearInterval(clock);
    vi.useRealTimers();
    await expect(issuing).rejects.toThrow(
      new StoreError(
        `KeyValueStore ${ARN}: changed by another writer during each of 5 attempts; nothing was changed, try again`,
      ),
    );
    expect(fake.calls().filter((call) => call === 'update')).toHaveLength(5);
    expect(fake.entries.size).toBe(0);
  });

  it('does not retry a refusal that is not a conflict, and says nothing was changed', async () => {
    fake.failUpdatesWith = { status: 403, type: 'AccessDeniedException' };
    await expect(setCorsOrigin(store, 'https://partner.example')).rejects.toThrow(
      `KeyValueStore ${ARN}: AccessDeniedException, HTTP 403: AccessDeniedException from the fake; nothing was changed`,
    );
    expect(fake.calls()).toEqual(['describe', 'list', 'update']);
  });

  it('sends no UpdateKeys when a rule fails, a limit would be passed, or nothing changes', async () => {
    await expect(revokeKeys(store, { target: { partner: 'nobody' }, now: NOW })).rejects.toThrow(
      'partner nobody has no keys',
    );
    await expect(setCorsOrigin(store, `https://${'a'.repeat(1100)}.example`)).rejects.toThrow(
      StoreLimitError,
    );
    await setCorsOrigin(store);
    expect(fake.calls()).not.toContain('update');
  });

  it('gives a clear error and changes nothing when the endpoint cannot be reached', async () => {
    const closedPort = await refusedPort();
    const unreachable = new CloudFrontKeyValueStore(kvsClientFor(closedPort), ARN);
    const issuing = issueKey(unreachable, { partner: 'acme', now: NOW });
    await expect(issuing).rejects.toThrow(StoreError);
    await expect(issuing).rejects.toThrow(
      new RegExp(
        `^KeyValueStore ${ARN}: cannot reach the service \\(connection refused: connect ECONNREFUSED 127\\.0\\.0\\.1:${closedPort}\\); nothing was changed$`,
      ),
    );
    expect(fake.requests).toEqual([]);
  });
});
