/** Reading a Secrets Manager secret at run time, for both functions (the builder's source, the monitoring key). */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CatalogError, ConfigError, describeCause } from '../contract/errors.ts';

/** Reads a secret's string, trimmed, at run time (so a rotated secret is picked up); its value never enters a message. */
export async function readSecret(client: SecretsManagerClient, secretArn: string): Promise<string> {
  let answer: { SecretString?: string | undefined };
  try {
    answer = await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
  } catch (error) {
    throw new CatalogError(`reading secret ${secretArn} failed (${describeCause(error)})`, { cause: error });
  }
  const text = answer.SecretString?.trim() ?? '';
  if (text === '') throw new ConfigError(`secret ${secretArn}: has no SecretString`);
  return text;
}
