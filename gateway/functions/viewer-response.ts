/**
 * Viewer-response function: runs on cache hits and origin answers below 400. Sets the spec's headers
 * exactly (contract §3), removes what S3 adds (`x-amz-*`, `Server`, any
 * `Access-Control-*`), and adds the CORS origin when one is set.
 */
import { HEADER_VALUES, PATHS } from '../../contract/index.ts';
import type { CloudFrontEvent, CloudFrontResponse } from './event.ts';
import { addCors, corsOrigin } from './shared.ts';

export async function handler(event: CloudFrontEvent): Promise<CloudFrontResponse> {
  // Read the store first: njs (and so, likely, the CloudFront runtime) refuses `await` inside call arguments.
  const origin = await corsOrigin();
  const response = event.response as CloudFrontResponse;
  const headers = response.headers;
  const names = Object.keys(headers);
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (name.indexOf('x-amz-') === 0 || name.indexOf('access-control-') === 0 || name === 'server') {
      delete headers[name];
    }
  }
  headers['x-content-type-options'] = { value: 'nosniff' };
  headers['cache-control'] = { value: HEADER_VALUES.cacheable };
  if (event.request.uri === PATHS.openapi) {
    headers['content-type'] = { value: HEADER_VALUES.yaml };
  } else {
    headers['content-type'] = { value: HEADER_VALUES.json };
    headers.vary = { value: 'X-Api-Key' };
  }
  addCors(headers, origin);
  return response;
}
