/**
 * `catalog builds`: the builds at an origin, newest first, for people — read from their manifests, the store's
 * pointer and the history of its moves (publish/history.ts), marking which were ever live.
 */
import pLimit from 'p-limit';
import { BUILDS_PREFIX, type Discipline } from '../contract/index.ts';
import { buildIdsOf } from '../publish/core.ts';
import { storeFailure } from '../publish/errors.ts';
import { everLive, listMoves } from '../publish/history.ts';
import { readPointer } from '../publish/pointer.ts';
import { type PublishTarget, readManifest } from '../publish/steps.ts';

/** One row of `catalog builds`. */
export interface BuildListing {
  readonly id: string;
  readonly generatedAt: string | null;
  readonly counts: Readonly<Record<Discipline, number>> | null;
  readonly live: boolean;
  /** In the pointer's history, in the rollback line, or live now (else a publish lost a race, say). */
  readonly everLive: boolean;
  readonly pinned: boolean;
  /** Its manifest is there and reads (the upload finished). */
  readonly complete: boolean;
}

/** The builds at the target's origin, newest first, marked by the pointer and the history of its moves. */
export async function builds({ origin, kvs }: PublishTarget): Promise<BuildListing[]> {
  try {
    const ids = await origin.listPrefixes(BUILDS_PREFIX).then(buildIdsOf);
    const [pointer, moves] = await Promise.all([readPointer(kvs), listMoves(origin)]);
    const wasLive = everLive(moves);
    for (const id of [pointer.live, ...pointer.previous]) if (id !== null) wasLive.add(id);
    const newest = ids.sort().reverse();
    const manifests = await pLimit(8).map(newest, async (id) => {
      const manifest = await readManifest(origin, id);
      return manifest && !('problem' in manifest) ? manifest : null;
    });
    return newest.map((id, index) => {
      const manifest = manifests[index] ?? null;
      return {
        id,
        generatedAt: manifest?.generatedAt ?? null,
        counts: manifest?.counts ?? null,
        live: id === pointer.live,
        everLive: wasLive.has(id),
        pinned: id === pointer.pin?.build,
        complete: manifest !== null,
      };
    });
  } catch (error) {
    throw storeFailure(`listing the builds of ${origin.name} failed`, { cause: error, readOnly: true });
  }
}
