/**
 * Prism (`prism proxy --errors`) in front of `catalog serve`: Prism checks every answer against openapi.yaml and
 * turns any that breaks it into a 500 with the violations in `sl-violations`. A sample of the request-case
 * table goes through it — the requests to the document's operations that Prism itself accepts as valid (it
 * answers invalid ones on its own, e.g. a bad `discipline` with 422 and a missing key with 401). The refused
 * methods and other paths are no operations: gateway/openapi.test.ts checks their answers against the
 * components the document describes them with.
 *
 * Schemathesis would go further (it generates requests, and checks the 405s of unsupported methods itself),
 * but it is a Python tool and PyPI cannot be reached from these machines; Prism is what runs here.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_ID_PATTERN } from '../contract/index.ts';
import { httpRequest, ROOT, type ServeProcess, startServe } from '../testing/cli.ts';
import { operationsOf, templateOf } from '../testing/openapi.ts';
import { createTestWorld, resolveCase, type TestWorld } from '../testing/world.ts';
import { REQUEST_CASES, type RequestCase } from './cases.ts';

/** Cases whose request is valid per the document, so that Prism forwards it to the edge. */
function forwarded(testCase: RequestCase): boolean {
  const [path = '', query = ''] = testCase.target.split('?');
  const template = templateOf(path);
  if (template === undefined || testCase.cors) return false;
  if (!operationsOf(template).includes(testCase.method.toLowerCase())) return false;
  // The document says a page's id is a UUID: Prism refuses any other id before forwarding.
  if (template === '/plans/{id}' && !PLAN_ID_PATTERN.test(path.slice('/plans/'.length).toLowerCase()))
    return false;
  if (testCase.method === 'GET' && path === '/api/plans') {
    const keys = (testCase.headers ?? []).filter(([name]) => name.toLowerCase() === 'x-api-key');
    if (keys.length !== 1 || keys[0]?.[1] === '') return false;
    // Prism matches parameter names case-insensitively and refuses repeats itself: keep only plain queries
    // whose discipline, if any, is valid once.
    const names = query
      .split('&')
      .filter(Boolean)
      .map((part) => (part.split('=')[0] ?? '').toLowerCase());
    const disciplines = query.split('&').filter((part) => part.split('=')[0]?.toLowerCase() === 'discipline');
    if (query.includes('%') || names.includes('discipline[]')) return false;
    if (disciplines.length > 1) return false;
    if (disciplines.length === 1 && !/^discipline=(running|strength)$/.test(disciplines[0] ?? ''))
      return false;
  }
  return true;
}

function startPrism(upstream: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    join(ROOT, 'node_modules/.bin/prism'),
    ['proxy', '--errors', join(ROOT, 'openapi.yaml'), upstream, '--host', '127.0.0.1', '--port', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`prism did not start: ${output}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Prism is listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ url: match[1], stop: () => child.kill() });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`prism exited ${code}: ${output}`)));
  });
}

describe('catalog serve behind Prism', () => {
  let world: TestWorld;
  let edge: ServeProcess;
  let prism: { url: string; stop: () => void };
  beforeAll(async () => {
    world = await createTestWorld();
    edge = await startServe(['--origin', world.originDir, '--store', world.stores.plain]);
    prism = await startPrism(edge.url);
  });
  afterAll(async () => {
    prism?.stop();
    await edge?.stop();
    await world?.remove();
  });

  const sample = REQUEST_CASES.filter(forwarded);

  it('forwards a real sample of the table', () => {
    expect(sample.length).toBeGreaterThanOrEqual(20);
    // 404: a plan page of an id in no catalog (a documented answer of GET /plans/{id}).
    expect(new Set(sample.map((c) => c.status))).toEqual(new Set([200, 204, 304, 401, 404]));
  });

  it.each(sample.map((c) => [`${c.status} ${c.name}`, c] as const))(
    '%s: no violation',
    async (_name, testCase) => {
      // Prism's own HTTP client asks for gzip when the request names no encoding; the case's validators are the
      // plain object's, so say what the case means: no Accept-Encoding is the plain object.
      const request = resolveCase(testCase, world);
      const named = request.headers.some(([name]) => name.toLowerCase() === 'accept-encoding');
      const answer = await httpRequest(prism.url, {
        ...request,
        headers: named ? request.headers : [...request.headers, ['Accept-Encoding', 'identity']],
      });
      expect(answer.headers['sl-violations'], answer.headers['sl-violations']).toBeUndefined();
      expect(answer.status, answer.body.toString()).toBe(testCase.status);
      expect(answer.status).toBe(testCase.status);
    },
  );
});
