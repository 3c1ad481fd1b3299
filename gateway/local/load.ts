import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../contract/errors.ts';
import { GATEWAY_DIST, GATEWAY_FUNCTIONS, type GatewayFunctionName } from '../functions/bundle.ts';
import { fillContactAddress } from '../functions/contact.ts';
import { loadFunction, type SandboxedFunction, type SandboxOptions } from './sandbox.ts';

/**
 * Loads a built function from `<root>/dist/gateway`, the viewer-request's 401 naming `contactAddress` as the
 * stack's does (gateway/functions/contact.ts); `onStale` hears when its source is newer than the bundle.
 */
export async function loadBuiltFunction(
  root: string,
  name: GatewayFunctionName,
  options: Pick<SandboxOptions, 'kvs' | 'log' | 'refreshStore'> & {
    readonly contactAddress: string;
    onStale?: (message: string) => void;
  },
): Promise<SandboxedFunction> {
  const path = join(root, GATEWAY_DIST, `${name}.js`);
  let code: string;
  try {
    code = await readFile(path, 'utf8');
  } catch {
    throw new ConfigError(`${path} is missing: run npm run build first`);
  }
  const [built, source] = await Promise.all([
    stat(path),
    stat(join(root, GATEWAY_FUNCTIONS[name])).catch(() => null),
  ]);
  if (source && source.mtimeMs > built.mtimeMs) {
    options.onStale?.(`${path} is older than its source: run npm run build to serve the current code`);
  }
  if (name === 'viewer-request') code = fillContactAddress(code, options.contactAddress);
  return loadFunction(code, { ...options, filename: path });
}
