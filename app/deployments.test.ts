/**
 * The deployments a checkout declares (infra/deployments/NAME.json) as both entry points name them: a name the
 * checkout does not declare is refused the same way by `catalog --deployment NAME` and by the CDK app's
 * `-c deployment=NAME`, with the name probably meant; a file whose name cannot be a deployment's is said to be
 * none, not offered as a choice. The commands run as their own processes in a scratch checkout.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromContext } from '../infra/config.ts';
import { runCatalogProcess } from '../testing/cli.ts';
import { type ScratchCheckout, scratchCheckout } from '../testing/infra/checkout.ts';
import { declaredDeployment, declaredDeployments, listDeployments, nearestName } from './deployments.ts';

const CONTACT = 'api-keys@trainingplans.app';

let checkout: ScratchCheckout;
beforeAll(async () => {
  checkout = await scratchCheckout({
    CatalogStaging: { deployment: 'CatalogStaging', region: 'eu-west-1', contactAddress: CONTACT },
  });
  // Files a reader may have left there: a name with a space, one starting with a digit, and not JSON at all.
  for (const file of ['My Deploy.json', '2024-prod.json', 'README.md'])
    await writeFile(join(checkout.dir, 'infra', 'deployments', file), '{}\n');
});
afterAll(() => checkout.remove());

/** The message a call throws. */
function failure(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('accepted');
}

/** The rule of a deployment's name, as the settings say it. */
const RULE =
  "must be a deployment's name: its stack's name, letters, digits and - (at most 48, a letter first)";
const LISTED = `declared in infra/deployments/: CatalogStaging, TrainingPlanCatalog; "2024-prod.json" is not one: its name ${RULE}; "My Deploy.json" is not one: its name ${RULE}`;

describe('the deployments a checkout declares', () => {
  it('are the files whose name is a deployment’s; the others are named as none, with the rule they break', () => {
    expect(declaredDeployments(checkout.dir)).toEqual({
      names: ['CatalogStaging', 'TrainingPlanCatalog'],
      invalid: [
        { file: '2024-prod.json', why: RULE },
        { file: 'My Deploy.json', why: RULE },
      ],
    });
    expect(listDeployments(checkout.dir)).toBe(LISTED);
    // As the CDK app lists them to a command that names none.
    expect(failure(() => configFromContext({}, checkout.dir))).toBe(
      `name the deployment: -c deployment=NAME (${LISTED})`,
    );
  });

  it('fails a name the checkout does not declare, naming the one probably meant and the declared ones', () => {
    expect(failure(() => declaredDeployment(checkout.dir, 'CatalogStagign', '--deployment'))).toBe(
      `--deployment "CatalogStagign": there is no infra/deployments/CatalogStagign.json; did you mean CatalogStaging? (${LISTED}; a new deployment is a new file there)`,
    );
    expect(failure(() => declaredDeployment(checkout.dir, 'Prod', '--deployment'))).toBe(
      `--deployment "Prod": there is no infra/deployments/Prod.json (${LISTED}; a new deployment is a new file there)`,
    );
    expect(declaredDeployment(checkout.dir, 'CatalogStaging', '--deployment').region).toBe('eu-west-1');
  });

  it('takes as the name probably meant only one a slip away, case aside', () => {
    const names = ['CatalogStaging', 'TrainingPlanCatalog'];
    expect(nearestName('catalogstaging', names)).toBe('CatalogStaging');
    expect(nearestName('TrainingPlanCatlog', names)).toBe('TrainingPlanCatalog');
    expect(nearestName('Prod', names)).toBeUndefined();
  });
});

describe('a misspelt deployment, by either entry point', () => {
  it('fails in catalog (asking AWS nothing, with no region) and in the CDK app with the same words', async () => {
    const cdk = failure(() => configFromContext({ deployment: 'CatalogStagng' }, checkout.dir));
    const cli = await runCatalogProcess(['status', '--deployment', 'CatalogStagng'], {
      cwd: checkout.dir,
      env: {},
    });
    expect(cli.code).toBe(1);
    const said = `"CatalogStagng": there is no infra/deployments/CatalogStagng.json; did you mean CatalogStaging? (${LISTED}; a new deployment is a new file there)`;
    expect(cli.stderr).toBe(`catalog: --deployment ${said}\n`);
    expect(cdk).toBe(`context deployment ${said}`);
  });
});
