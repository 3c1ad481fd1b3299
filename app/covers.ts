/**
 * The fixture covers, which the local edge alone (never CloudFront) serves under `LOCAL_COVER_PATH`, so a local
 * build's plans show real covers with no network (it points `FIXTURE_COVER_ORIGIN` at its own origin).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LOCAL_COVER_PATH, NOSNIFF } from '../contract/index.ts';
import type { Edge, EdgeResponse } from '../gateway/local/edge.ts';
import { repoRoot } from './paths.ts';

/** A cover's file name: nothing that could leave the folder. */
const COVER_NAME = /^[a-z0-9-]{1,64}\.png$/;

const answer = (status: number, headers: Record<string, string>, body: Buffer): EdgeResponse => ({
  status,
  headers: { 'cache-control': status === 200 ? 'max-age=300' : 'no-store', ...headers },
  body,
  partner: null,
  logData: null,
});

/** `edge`, with a GET or HEAD of a fixture cover answered from fixtures/covers/ (404 for any other name). */
export function withFixtureCovers(edge: Pick<Edge, 'handle'>): Pick<Edge, 'handle'> {
  const dir = join(repoRoot(), 'fixtures', 'covers');
  return {
    async handle(raw) {
      if (!raw.target.startsWith(LOCAL_COVER_PATH) || (raw.method !== 'GET' && raw.method !== 'HEAD'))
        return edge.handle(raw);
      const name = raw.target.slice(LOCAL_COVER_PATH.length);
      const body = COVER_NAME.test(name) ? await readFile(join(dir, name)).catch(() => null) : null;
      return body
        ? answer(200, { 'content-type': 'image/png', 'x-content-type-options': NOSNIFF }, body)
        : answer(
            404,
            { 'content-type': 'text/plain; charset=utf-8' },
            Buffer.from('no such fixture cover\n'),
          );
    },
  };
}
