/** Bundling both CloudFront Functions for `npm run build` (tools/build.ts). */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  bundleFunction,
  FUNCTION_SIZE_LIMIT,
  FUNCTION_SIZE_TARGET,
  GATEWAY_DIST,
  GATEWAY_FUNCTIONS,
  type GatewayFunctionName,
} from '../gateway/functions/bundle.ts';

/**
 * Bundles and checks both functions into `<root>/dist/gateway/<name>.js` and returns their sizes in bytes.
 * Throws (and writes nothing) when either fails its checks.
 */
export async function buildGateway(root: string): Promise<Record<GatewayFunctionName, number>> {
  const names = Object.keys(GATEWAY_FUNCTIONS) as GatewayFunctionName[];
  const codes = await Promise.all(names.map((name) => bundleFunction(join(root, GATEWAY_FUNCTIONS[name]))));
  await mkdir(join(root, GATEWAY_DIST), { recursive: true });
  const sizes = {} as Record<GatewayFunctionName, number>;
  for (const [index, name] of names.entries()) {
    const code = codes[index] as string;
    await writeFile(join(root, GATEWAY_DIST, `${name}.js`), code);
    sizes[name] = Buffer.byteLength(code);
  }
  return sizes;
}

/** One line per function: size against the 10 KB limit and the 4 KB aim. */
export function describeSizes(sizes: Record<GatewayFunctionName, number>): string {
  return Object.entries(sizes)
    .map(([name, bytes]) => {
      const note = bytes > FUNCTION_SIZE_TARGET ? ` (over the ${FUNCTION_SIZE_TARGET}-byte aim)` : '';
      return `${GATEWAY_DIST}/${name}.js: ${bytes} bytes of ${FUNCTION_SIZE_LIMIT}${note}`;
    })
    .join('\n');
}
