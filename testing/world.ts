/**
 * The world the gateway tests run in, made with the real builder, publisher and key store: the fixtures
 * published into an origin directory (a build under `builds/<id>/`, its pages live under `plans/`, the live
 * pointer in the store) — and two store files (without and with a CORS origin) holding the keys the case table
 * names. Test support only.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { publish } from '../app/run.ts';
import { defaultOf, parseSettings } from '../app/settings/index.ts';
import { LOCAL_CONTACT_ADDRESS } from '../app/settings/registry.ts';
import { prepareBuild } from '../builder/build.ts';
import { DEFAULT_LINKS } from '../builder/model.ts';
import { OPENAPI_TEMPLATE } from '../builder/openapi-template.generated.ts';
import { FileSource } from '../builder/sources/file.ts';
import {
  catalogFile,
  KVS_CORS_ORIGIN,
  MONITORING_PARTNER,
  NOT_FOUND_PAGE,
  ORIGIN_FILES,
  perDiscipline,
  planPageKey,
} from '../contract/index.ts';
import { type OriginObjectName, PAGE_PLAN_ID, PARTNER_ORIGIN, type RequestCase } from '../gateway/cases.ts';
import { GATEWAY_DIST, type GatewayFunctionName } from '../gateway/functions/bundle.ts';
import { fillContactAddress } from '../gateway/functions/contact.ts';
import type { Answer } from '../gateway/judge.ts';
import { Edge, type EdgeResponse, type ResponseEventRequest } from '../gateway/local/edge.ts';
import { EdgeOrigin } from '../gateway/local/origin.ts';
import { loadFunction, VIEWER_RESPONSE_RUNTIME } from '../gateway/local/sandbox.ts';
import { WatchedKeyValueStore } from '../gateway/local/store.ts';
import { FileKeyValueStore } from '../keys/file-store.ts';
import { generateKey, hashKey, storeKeyOf } from '../keys/keys.ts';
import { issueKey } from '../keys/manage.ts';
import { DirectoryOrigin } from '../publish/dir-origin.ts';
import { ROOT, scratchDir } from './cli.ts';

export type { Answer } from '../gateway/judge.ts';

export type KeyName = 'valid' | 'other' | 'expiring' | 'expired' | 'revoked' | 'forged' | 'monitoring';

export interface TestWorld {
  readonly dir: string;
  readonly originDir: string;
  /** The live build, and its folder. */
  readonly buildId: string;
  readonly buildDir: string;
  /** Store files: `plain` has no CORS origin, `cors` allows {@link PARTNER_ORIGIN}. */
  readonly stores: { readonly plain: string; readonly cors: string };
  readonly keys: Readonly<Record<KeyName, string>>;
  /** The live build's objects the table names, and the not-found page at the origin's root. */
  readonly objects: Readonly<Record<OriginObjectName | 'notFoundPage', Buffer>>;
  /**
   * The Last-Modified date the edge sends for each stored object (its file's time, as an HTTP-date): `all`, and
   * its variants `all.br`, `all.gz`, each written at its own moment (a second may turn between them).
   */
  readonly modified: Readonly<Record<OriginObjectName, string>> &
    Readonly<Record<string, string | undefined>>;
  /** The ETag the edge sends for each stored object of the live build: `all`, and its variants `all.br`, `all.gz`. */
  readonly etags: Readonly<Record<string, string>>;
  remove(): Promise<void>;
}

const OBJECT_FILES: Record<OriginObjectName, string> = {
  all: ORIGIN_FILES.all,
  ...perDiscipline(catalogFile),
  openapi: ORIGIN_FILES.openapi,
  page: planPageKey(PAGE_PLAN_ID),
};

/**
 * Publishes the fixtures and makes the key stores, in a scratch directory. The catalog's links point at
 * `baseUrl` (default: the local stack's), where the world is going to be served.
 */
export async function createTestWorld(options: { readonly baseUrl?: string } = {}): Promise<TestWorld> {
  const { dir, remove } = await scratchDir('catalog-gateway-');
  const originDir = join(dir, 'origin');
  const result = await prepareBuild(new FileSource(join(ROOT, 'fixtures/plans.json')), {
    links: { ...DEFAULT_LINKS, ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) },
    skipInvalid: false,
    now: new Date(),
    openapiTemplate: OPENAPI_TEMPLATE,
    contactAddress: LOCAL_CONTACT_ADDRESS,
  });
  const plain = new FileKeyValueStore(join(dir, 'kvs.json'), { create: true });
  await publish(
    {
      ...parseSettings('build', () => undefined, String),
      allowEmpty: false,
      minRatio: 0,
      keepBuilds: defaultOf('keepBuilds'),
    },
    { origin: new DirectoryOrigin(originDir), kvs: plain },
    { now: new Date(result.generatedAt), force: false, report: () => {}, prepared: result },
  );
  const objectDir = join(originDir, 'builds', result.buildId);

  const now = new Date();
  const hour = 3_600_000;
  const valid = (await issueKey(plain, { partner: 'acme', now })).key;
  const other = (await issueKey(plain, { partner: 'globex', now })).key;
  const expiring = (
    await issueKey(plain, { partner: 'initech', now, expires: new Date(now.getTime() + hour) })
  ).key;
  const expired = (
    await issueKey(plain, {
      partner: 'umbrella',
      now: new Date(now.getTime() - 2 * hour),
      expires: new Date(now.getTime() - hour),
    })
  ).key;
  const revoked = (await issueKey(plain, { partner: 'hooli', now })).key;
  // The deployment's own checks' key: the canary's marker names it.
  const monitoring = (await issueKey(plain, { partner: MONITORING_PARTNER, now })).key;
  await plain.update((entries) => {
    entries.delete(storeKeyOf(hashKey(revoked)));
  });
  const cors = new FileKeyValueStore(join(dir, 'kvs-cors.json'), { create: true });
  const entries = await plain.read();
  await cors.update((target) => {
    for (const [k, v] of entries) target.set(k, v);
    target.set(KVS_CORS_ORIGIN, PARTNER_ORIGIN);
  });

  const objects = {} as Record<OriginObjectName | 'notFoundPage', Buffer>;
  objects.notFoundPage = await readFile(join(originDir, NOT_FOUND_PAGE));
  const modified = {} as Record<OriginObjectName, string> & Record<string, string>;
  // A build's catalogs are in its folder; the live pages at the origin's root, shared by every build.
  const pathOf = (name: string, file: string) => join(name === 'page' ? originDir : objectDir, file);
  for (const [name, file] of Object.entries(OBJECT_FILES)) {
    objects[name as OriginObjectName] = await readFile(pathOf(name, file));
    modified[name as OriginObjectName] = (await stat(pathOf(name, file))).mtime.toUTCString();
  }
  const etags: Record<string, string> = {};
  for (const [name, file] of Object.entries(OBJECT_FILES)) {
    etags[name] = etagOf(objects[name as OriginObjectName]);
    if (name === 'page') continue; // a page has no stored variants: the distribution compresses it
    for (const suffix of ['.br', '.gz']) {
      const path = join(objectDir, `${file}${suffix}`);
      etags[`${name}${suffix}`] = etagOf(await readFile(path));
      modified[`${name}${suffix}`] = (await stat(path)).mtime.toUTCString();
    }
  }
  return {
    dir,
    originDir,
    buildId: result.buildId,
    buildDir: objectDir,
    stores: { plain: plain.name, cors: cors.name },
    keys: { valid, other, expiring, expired, revoked, forged: generateKey(), monitoring },
    objects,
    modified,
    etags,
    remove,
  };
}

/** The strong ETag of an origin object, as S3 (and the local origin) compute it. */
export function etagOf(body: Buffer): string {
  return `"${createHash('md5').update(body).digest('hex')}"`;
}

/** Replaces the placeholders of a case (`{valid}`, `{etag:running}`, `{modified:all}`…) with the world's values. */
export function resolvePlaceholders(text: string, world: TestWorld): string {
  return text.replace(/\{(etag:|modified:)?([a-z.]+)\}/g, (match, kind: string | undefined, name: string) => {
    if (kind === 'etag:') return world.etags[name] ?? match;
    if (kind === 'modified:') return world.modified[name as OriginObjectName];
    return Object.hasOwn(world.keys, name) ? ((world.keys as Record<string, string>)[name] ?? match) : match;
  });
}

/** A case's request with its placeholders resolved. */
export function resolveCase(testCase: RequestCase, world: TestWorld) {
  return {
    method: testCase.method,
    target: resolvePlaceholders(testCase.target, world),
    headers: (testCase.headers ?? []).map(
      ([name, value]) => [name, resolvePlaceholders(value, world)] as const,
    ),
  };
}

/**
 * The built bundles (npm run build), loaded into the local runtime over a world's store; `responseEventRequest`
 * chooses the request the viewer-response function is shown (the edge's default: as the viewer sent it), and
 * `viewerRequestCode`, when given, what runs of viewer-request's bundle (a test's prologue before it).
 */
export async function edgeFor(
  world: TestWorld,
  store: 'plain' | 'cors',
  responseEventRequest?: ResponseEventRequest,
  viewerRequestCode: (bundle: string) => string = (bundle) => bundle,
): Promise<Edge> {
  const kvs = new WatchedKeyValueStore(world.stores[store]);
  await kvs.load();
  return new Edge({
    viewerRequest: loadFunction(viewerRequestCode(await builtFunctionCode('viewer-request')), { kvs }),
    viewerResponse: loadFunction(await builtFunctionCode('viewer-response'), {
      kvs,
      ...VIEWER_RESPONSE_RUNTIME,
    }),
    origin: new EdgeOrigin(new DirectoryOrigin(world.originDir)),
    ...(responseEventRequest ? { responseEventRequest } : {}),
  });
}

/**
 * A function built by `npm run build` as the local edge runs it: the viewer-request's 401 naming the local stack's
 * contact address, filled in as the stack and `catalog serve` fill theirs (gateway/functions/contact.ts).
 */
export async function builtFunctionCode(name: GatewayFunctionName): Promise<string> {
  const code = await readFile(join(ROOT, GATEWAY_DIST, `${name}.js`), 'utf8');
  return name === 'viewer-request' ? fillContactAddress(code, LOCAL_CONTACT_ADDRESS) : code;
}

/** An edge response as a client would see it (multiple values joined). */
export function toAnswer(response: EdgeResponse): Answer {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers))
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return { status: response.status, headers, body: response.body, logData: response.logData ?? null };
}
