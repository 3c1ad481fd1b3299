/**
 * Viewer-response function: on cache hits and origin answers below 400, sets the spec's headers exactly
 * (`Cache-Control: max-age=300` whatever the object says, `Vary` with `Accept-Encoding`), removes what S3 adds
 * (`x-amz-*`, `Server`, any `Access-Control-*`) and adds the CORS origin when one is set. What was served is
 * told by the object's `Content-Type` (a page, openapi.yaml, else a catalog), never by the request URI: AWS does
 * not promise that viewer-request's rewrite shows in this event (gateway/README.md, "What runs when").
 */
import {
  CATALOG_HEADERS,
  KVS_CORS_ORIGIN,
  OPENAPI_HEADERS,
  PAGE_SERVED_HEADERS,
} from '../../contract/index.ts';
import type { CloudFrontEvent, CloudFrontResponse, Fields } from './event.ts';
import { addCors, read, setHeaders } from './shared.ts';

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
  const origin = await read(KVS_CORS_ORIGIN);
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
