/** The CloudFront Functions event shapes (DG/functions-event-structure.html), as the functions use them. */

export interface Field {
  value: string;
  multiValue?: { value: string }[];
}

export type Fields = Record<string, Field>;

export interface CloudFrontRequest {
  readonly method: string;
  uri: string;
  querystring: Fields;
  headers: Fields;
  cookies: Fields;
}

export interface CloudFrontResponse {
  statusCode: number;
  statusDescription?: string;
  headers: Fields;
  cookies?: Fields;
  body?: string | { encoding: 'text' | 'base64'; data: string };
}

export interface CloudFrontEvent {
  version: '1.0';
  context: {
    distributionDomainName?: string;
    distributionId?: string;
    eventType: string;
    requestId?: string;
  };
  viewer: { ip: string };
  request: CloudFrontRequest;
  response?: CloudFrontResponse;
}
