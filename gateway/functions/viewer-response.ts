/**
 * Viewer-response function: runs on cache hits and origin answers below 400 (a catalog, openapi.yaml or a plan
 * page). Sets the spec's headers exactly (`Vary` names `Accept-Encoding` too; the object's `Content-Encoding` stays), removes what S3 adds
 * (`x-amz-*`, `Server`, any `Access-Control-*`), and adds the CORS origin when one is set. A build's objects
 * are stored to be cached for a long time; partners are told `max-age=300` all the same.
 */
import { ORIGIN_FILES, PAGE_OBJECT_SUFFIX, SERVED_HEADERS } from '../../contract/index.ts';
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
  headers['cache-control'] = { value: SERVED_HEADERS.cacheable };
  // The body's encoding depends on Accept-Encoding: without it in Vary, a shared cache in front would hand
  // a brotli body to a client that asked for gzip.
  // The request as viewer-request left it: the live build's object, e.g. /builds/<id>/openapi.yaml.br.
  const uri = event.request.uri;
  if (uri.indexOf(PAGE_OBJECT_SUFFIX) !== -1) {
    // A plan page keeps its stored type; its security headers come from the distribution's response headers
    // policy, which also covers the not-found page (no function runs on that one).
    headers.vary = { value: SERVED_HEADERS.varyEncoding };
  } else if (uri.indexOf(ORIGIN_FILES.openapi) !== -1) {
    headers['content-type'] = { value: SERVED_HEADERS.yaml };
    headers.vary = { value: SERVED_HEADERS.varyEncoding };
  } else {
    headers['content-type'] = { value: SERVED_HEADERS.json };
    headers.vary = { value: SERVED_HEADERS.varyPlans };
  }
  addCors(headers, origin);
  return response;
}
