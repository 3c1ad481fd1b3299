import { describe, expect, it } from 'vitest';
import { awsVariablesIn, describeTarget } from './target.ts';

const ARN = 'arn:aws:cloudfront::123456789012:key-value-store/8562a61f-caba-2845-9d99-b97d1ae5d3c0';

describe('what a command that changes state acts on', () => {
  it('names a deployment, AWS parts given by flag, a local origin and store, or the local stack', () => {
    expect(
      describeTarget('publish', { deployment: 'prod', bucket: 'b', kvsArn: ARN, region: 'eu-west-1' }, {}),
    ).toEqual({ line: `publish acts on deployment prod (bucket b, store ${ARN}, in eu-west-1)` });
    expect(describeTarget('unpin', { bucket: 'b', kvsArn: ARN }, {})).toEqual({
      line: `unpin acts on AWS: bucket b, store ${ARN}, in the AWS SDK's region`,
    });
    expect(
      describeTarget('rollback', { origin: '/srv/o', store: '/srv/kvs.json' }, { AWS_PROFILE: 'p' }),
    ).toEqual({
      line: 'rollback acts on the local origin /srv/o and store /srv/kvs.json',
    });
    expect(describeTarget('cors clear', { store: '.catalog/kvs.json' }, {})).toEqual({
      line: 'cors clear acts on the local stack in .catalog/ (store .catalog/kvs.json)',
    });
  });

  it('warns when the local stack is acted on while AWS variables are set, naming them and never a value', () => {
    const said = describeTarget(
      'publish',
      { origin: '.catalog/origin', store: '.catalog/kvs.json' },
      { AWS_ACCESS_KEY_ID: 'AKIA-SECRET', CATALOG_BUCKET: 'prod-origin', AWS_REGION: '', PATH: '/bin' },
    );
    expect(said.warning).toBe(
      'AWS settings are in the environment (AWS_ACCESS_KEY_ID, CATALOG_BUCKET), but this acts on the local stack in .catalog/, not on AWS; to act on a deployment, give --deployment NAME (or CATALOG_DEPLOYMENT)',
    );
    expect(awsVariablesIn({ CATALOG_KVS_ARN: ARN, CATALOG_DEPLOYMENT: 'x', CATALOG_PORT: '1' })).toEqual([
      'CATALOG_DEPLOYMENT',
      'CATALOG_KVS_ARN',
    ]);
  });
});
