/**
 * Viewer-response function: runs on cache hits and origin answers below 400 (a catalog, openapi.yaml or a plan
 * page). Sets the spec's headers exactly (`Vary` names `Accept-Encoding` too; the object's `Content-Encoding`
 * stays), removes what S3 adds (`x-amz-*`, `Server`, any `Access-Control-*`), and adds the CORS origin when one
 * is set. A build's objects are stored to be cached for a long time; partners are told `max-age=300` all the
 * same.
 *
 * What was served is decided by the object's `Content-Type` from the origin, which the builder sets on every
 * object it writes (builder/build.ts: the page, openapi.yaml and catalog types of contract/index.ts), never by
 * the request: AWS describes the request of a viewer-response event as the one the viewer sent and does not
 * promise that the viewer-request function's rewrite (`/builds/<id>/…`) shows there, so the URI may be
 * `/api/plans`, `/openapi.yaml` or `/plans/<id>` as well as the object's key. A page keeps its type; an object
 * of any other type than a page or YAML is a catalog (gateway/README.md).
 */
import { CATALOG_HEADERS, OPENAPI_HEADERS, PAGE_SERVED_HEADERS } from '../../contract/index.ts';
import type { CloudFrontEvent, CloudFrontResponse, Fields } from './event.ts';
import { addCors, corsOrigin, setHeaders } from './shared.ts';

/** The media type of a `Content-Type` value, lowercase, without its parameters (`text/html`). */
function mediaType(value: string): string {
  const semicolon = value.indexOf(';');
  return (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
}

/** The media type the origin gave the object ('' when it gave none). */
function servedType(headers: Fields): string {
  const field = headers['content-type'];
  return field ? mediaType(field.value) : '';
}

export async function handler(event: CloudFrontEvent): Promise<CloudFrontResponse> {
  // Read the store first: njs (and so, likely, the CloudFront runtime) refuses `await` inside call arguments.
  const origin = await corsOrigin();
  const response = event.response as CloudFrontResponse;
  const headers = response.headers;
  const type = servedType(headers);
  const names = Object.keys(headers);
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (name.indexOf('x-amz-') === 0 || name.indexOf('access-control-') === 0 || name === 'server') {
      delete headers[name];
    }
  }
  // The body's encoding depends on Accept-Encoding: without it in Vary, a shared cache in front would hand
  // a brotli body to a client that asked for gzip. A plan page's security headers come from the distribution's
  // response headers policy, which also covers the not-found page (no function runs on that one).
  if (type === mediaType(PAGE_SERVED_HEADERS['content-type'])) setHeaders(headers, PAGE_SERVED_HEADERS);
  else if (type === mediaType(OPENAPI_HEADERS['content-type'])) setHeaders(headers, OPENAPI_HEADERS);
  else setHeaders(headers, CATALOG_HEADERS);
  addCors(headers, origin);
  return response;
}
