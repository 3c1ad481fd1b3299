/**
 * Where a command acts, found from where it is typed: a deployment's region from its file in the checkout
 * (infra/deployments/NAME.json, app/deployments.ts), and the local stack from the checkout's root, whichever of
 * its folders the command runs in. Commands run as their own processes in a scratch checkout, against a
 * CloudFormation stand-in that records each request.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStacksAnswer, type Recorder, startRecorder, TEST_AWS_ENV } from '../testing/aws.ts';
import { EMPTY_STORE, ROOT, runCatalog } from '../testing/cli.ts';
import { type ScratchCheckout, scratchCheckout } from '../testing/infra/checkout.ts';
import { checkoutRoot, localStackPath } from './paths.ts';

let checkout: ScratchCheckout;
let cloudFormation: Recorder;
beforeAll(async () => {
  checkout = await scratchCheckout({
    CatalogWest: {
      deployment: 'CatalogWest',
      region: 'eu-west-1',
      contactAddress: 'api-keys@trainingplans.app',
    },
  });
  cloudFormation = await startRecorder();
  cloudFormation.answerWith((request) =>
    describeStacksAnswer(new URLSearchParams(request.body).get('StackName') ?? ''),
  );
});
afterAll(async () => {
  await cloudFormation.close();
  await checkout.remove();
});

/** The region a request to the stand-in was signed for (its SigV4 credential scope). */
const signedRegion = (authorization: unknown) =>
  /Credential=[^/]+\/\d{8}\/([a-z0-9-]+)\/cloudformation\//.exec(String(authorization))?.[1];

describe('--deployment NAME', () => {
  it('looks for the stack in the region its file declares, whatever AWS_REGION says', async () => {
    const before = cloudFormation.requests.length;
    const result = await runCatalog(['builds', '--deployment', 'CatalogWest'], {
      cwd: checkout.dir,
      env: { ...TEST_AWS_ENV, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url },
    });
    expect(result.stderr).toBe(
      'catalog: --deployment "CatalogWest": there is no stack CatalogWest in eu-west-1 (the region infra/deployments/CatalogWest.json declares: not deployed yet, or destroyed)\n',
    );
    const asked = cloudFormation.requests.slice(before);
    expect(asked).toHaveLength(1);
    expect(signedRegion(asked[0]?.headers.authorization)).toBe('eu-west-1');
  });

  it('refuses a --region other than its file’s, asking nothing', async () => {
    const before = cloudFormation.requests.length;
    const result = await runCatalog(['builds', '--deployment', 'CatalogWest', '--region', 'us-east-1'], {
      cwd: join(checkout.dir, 'infra'),
      env: { ...TEST_AWS_ENV, AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'catalog: --region us-east-1: the deployment CatalogWest is in eu-west-1 (infra/deployments/CatalogWest.json); leave --region out\n',
    );
    expect(cloudFormation.requests.length).toBe(before);
  });
});

describe('the local stack, from a folder of the checkout', () => {
  it('is the checkout’s .catalog/ seen from the folder', () => {
    expect(checkoutRoot(join(ROOT, 'infra', 'deployments'))).toBe(ROOT.replace(/\/$/, ''));
    expect(localStackPath('.catalog/kvs.json', join(ROOT, 'infra'))).toBe('../.catalog/kvs.json');
    expect(localStackPath('.catalog/kvs.json', ROOT)).toBe('.catalog/kvs.json');
    expect(localStackPath('.catalog/kvs.json', '/')).toBe('.catalog/kvs.json');
  });

  it('is what keys and status act on when typed in infra/ (cd infra && npx catalog status)', async () => {
    const local = join(checkout.dir, '.catalog');
    await mkdir(local, { recursive: true });
    const root = { cwd: checkout.dir };
    const infra = { cwd: join(checkout.dir, 'infra') };
    // The local stack, made at the root as npm start makes it: a store, a published build, a key.
    await writeFile(join(local, 'kvs.json'), EMPTY_STORE);
    const published = await runCatalog(
      ['publish', '--source', join(ROOT, 'fixtures', 'plans.json'), '--base-url', 'http://127.0.0.1:8787'],
      root,
    );
    expect(published.code, published.stderr).toBe(0);
    const issued = await runCatalog(['keys', 'issue', '--partner', 'acme'], infra);
    expect(issued.code, issued.stderr).toBe(0);
    const listed = await runCatalog(['keys', 'list', '--json'], root);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ partner: 'acme' }]);
    const status = await runCatalog(['status', '--json'], infra);
    expect(status.stderr).not.toContain('does not exist');
    expect(JSON.parse(status.stdout)).toMatchObject({ live: { buildId: expect.any(String) } });
  });
});
