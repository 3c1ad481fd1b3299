// Generated from openapi.yaml by `npm run build` (tools/openapi-module.ts). Do not edit: edit openapi.yaml.

/** The repository's openapi.yaml: the template of the served document. */
export const OPENAPI_TEMPLATE = `openapi: 3.1.0
info:
  title: Training Plan Catalog API
  version: 1.0.0
  summary: The catalog of published, approved training plans, for partner servers.
  description: |
    A read-only catalog of published, approved training plans, served as JSON from one endpoint,
    \`GET /api/plans\`, with an optional \`discipline\` filter. Besides it: this description, \`GET /openapi.yaml\`,
    and one web page per plan, \`GET /plans/{id}\` (the plan's \`webUrl\`).

    **Who calls it.** Partner servers, each holding an API key sent in the \`X-Api-Key\` header. Keys are issued by
    the operator on request through <CONTACT_ADDRESS>; there is no self-serve signup. Keep the key on your server:
    never put it in browser code. Where the operator hands out one shared key rather than one key per partner,
    every partner holds that same key, so a key leaked by any partner affects every partner (ask for a key of
    your own).

    **Browsers.** Browsers are not an intended client of \`/api/plans\`. Cross-origin access is off by default: the
    service sends no \`Access-Control-Allow-Origin\`, so a browser refuses to expose the response (the preflight
    still succeeds). The operator can allow exactly one origin for the whole API on request; allowing one
    replaces any earlier one, and it never removes the need to keep the key out of browser code. A partner that
    needs the data in a browser runs its own server-side proxy that holds the key, calls this service, caches the
    result and serves its own frontend. Two answers never carry a CORS header, whatever origin is allowed: the
    500 problem (\`#/components/responses/InternalError\`) and the plan pages' HTML not-found page
    (\`#/components/responses/PlanPageNotFound\`). The CDN serves both from its own error pages, where no code of
    this API runs, so a browser script sees them as a failed request rather than reading them.

    **Plan pages.** Every plan's \`webUrl\`, \`{base_url}/plans/{id}\`, is a web page for people: anyone can open it,
    without a key, so it is always safe to render as a link. (An operator whose product has its own website may
    point \`webUrl\` there instead; the link is then that site's page.)

    **Caching.** Responses are cacheable by shared caches for 300 seconds and vary by \`X-Api-Key\` and
    \`Accept-Encoding\` (the body is sent brotli- or gzip-compressed when you accept it). They may come from a CDN
    and be much older than that: \`generatedAt\` can be about 25 hours old and is not a freshness signal.
    Conditional requests work as a CDN answers them: send the \`ETag\` back in \`If-None-Match\`, or the
    \`Last-Modified\` date in \`If-Modified-Since\`, and an unchanged copy gets 304 with no body (\`If-None-Match\`
    wins when both are sent). A \`Range\` header is ignored: the answer is always the whole document. Cache the
    catalog on your server rather than calling per page view; on a failed call (any non-2xx answer) keep serving
    your last good copy rather than an empty catalog. A proxy with nothing cached answers 502 to its own
    frontend.

    **Order and size.** Plans are sorted by discipline ascending (\`running\` before \`strength\`), then by title
    ascending as \`new Intl.Collator('en').compare\` orders titles (a locale-aware comparison, not code-point
    order), then by \`id\` as the last tie-break. The order is stable and may be relied on: the same plans always
    come in the same order. There is no pagination: the full matching set is always returned.

    **Text.** JSON answers are UTF-8 and say so: \`application/json; charset=utf-8\` (the document itself is
    \`application/yaml; charset=utf-8\`, the pages \`text/html; charset=utf-8\`). Error answers are
    \`application/problem+json\`, a type that is UTF-8 by definition and takes no \`charset\` parameter.

    **Errors.** Error answers are RFC 9457 problem details (\`application/problem+json\`) with a stable \`type\`:
    400 \`…:invalid-discipline\`, 401 \`…:unauthorized\`, 404 \`…:not-found\`, 405 \`…:method-not-allowed\`,
    500 \`…:internal-error\`. A request is checked in this order, and the first rule that applies answers: the
    path (404), the method (405), then for \`GET /api/plans\` the key (401) and only then \`discipline\` (400). So
    a request with a missing or wrong key and a bad \`discipline\` gets 401, never 400.

    **Answers that are not operations.** The operations below are everything the service does. Every other
    request is refused, and these refusals are described once here rather than as operations:

    - Any path other than \`/api/plans\`, \`/openapi.yaml\`, \`/plans/{id}\` and \`/\`, whatever the method, gets 404:
      \`#/components/responses/NotFound\` (a problem document). Under \`/plans/\`, a GET or HEAD of a path that is
      not a plan page (\`/plans/\`, \`/plans/a/b\`) gets the HTML not-found page instead:
      \`#/components/responses/PlanPageNotFound\`; any other method there gets 405, as on a plan page.
    - On \`/api/plans\` and \`/openapi.yaml\`, any method other than GET and OPTIONS (HEAD, POST, PUT, PATCH,
      DELETE, …) gets 405 with \`Allow: GET, OPTIONS\`, before the key is looked at:
      \`#/components/responses/MethodNotAllowed\`. A HEAD answer has the headers and no body. HEAD is therefore not
      a health check; \`GET /api/plans?discipline=running\` is a cheap, CDN-cached liveness probe.
    - \`OPTIONS /openapi.yaml\` gets the same answer as \`OPTIONS /api/plans\`: \`#/components/responses/Preflight\`.
    - On \`/plans/{id}\` and on the home page \`/\`, any method other than GET and HEAD (OPTIONS included) gets 405
      with \`Allow: GET, HEAD\`: \`#/components/responses/PlanPageMethodNotAllowed\`.
    - A method the HTTP parser cannot read at all (an unknown or lowercase verb) gets a plain 400 from the CDN
      before this API sees it.

    **Versioning.** The path has no version segment. Plan \`id\` values are stable, and the \`level\` enum is closed.
servers:
  - url: http://127.0.0.1:8787
    description: The local stack (\`npm start\`). The served copy of this document names its own deployment.
security:
  - apiKey: []
tags:
  - name: catalog
    description: The training plan catalog.
  - name: meta
    description: This description.
  - name: pages
    description: The plans' web pages, for people (each plan's \`webUrl\`), and the home page.
paths:
  /:
    get:
      tags: [ pages ]
      operationId: getHomePage
      summary: The home page (HTML, for people)
      description: |
        What this service is, how to call it (the path, the key's header, the discipline parameter) and where
        partners ask for a key (the operator's contact address), with a link to download this document: for a
        person who opened the service's address. No key needed (a key, even a wrong one, is ignored), and the
        query string is ignored.
      security: []
      responses:
        '200': { $ref: '#/components/responses/HomePage' }
    head:
      tags: [ pages ]
      operationId: headHomePage
      summary: The headers of the home page
      description: The answer \`GET\` would give, headers only (no body). No key needed.
      security: []
      responses:
        '200': { $ref: '#/components/responses/HomePage' }
  /api/plans:
    get:
      tags: [ catalog ]
      operationId: listPlans
      summary: List every published, approved training plan
      description: |
        Returns the full catalog, or the plans of one discipline, sorted by discipline, then by title as
        \`new Intl.Collator('en').compare\` orders titles, then by \`id\`. Any query parameter other than
        \`discipline\` is ignored and does not bypass the cache.

        The key is checked before \`discipline\`: a missing or wrong key gets 401 even when \`discipline\` is
        invalid too. A conditional request (\`If-None-Match\` or \`If-Modified-Since\`) still needs a valid key:
        without one the answer is 401, never 304.
      security:
        - apiKey: []
      parameters:
        - $ref: '#/components/parameters/discipline'
        - $ref: '#/components/parameters/ifNoneMatch'
        - $ref: '#/components/parameters/ifModifiedSince'
      responses:
        '200':
          description: The catalog (or one discipline's part of it).
          headers:
            Cache-Control: { $ref: '#/components/headers/CacheControlPublic' }
            Vary: { $ref: '#/components/headers/VaryPlans' }
            ETag: { $ref: '#/components/headers/ETag' }
            Last-Modified: { $ref: '#/components/headers/LastModified' }
            Content-Encoding: { $ref: '#/components/headers/ContentEncoding' }
            X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
            Access-Control-Allow-Origin: { $ref: '#/components/headers/AccessControlAllowOrigin' }
          content:
            application/json; charset=utf-8:
              schema: { $ref: '#/components/schemas/Catalog' }
              example:
                generatedAt: '2026-11-21T08:00:00.000Z'
                plans:
                  - id: 0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10
                    title: Couch to 5K
                    summary: Walk-run intervals that build to thirty minutes of continuous running.
                    coverUrl: https://images.trainingplans.example/covers/couch-to-5k.jpg
                    level: beginner
                    discipline: running
                    disciplineLabel: Outdoor
                    weeksCount: 9
                    daysPerWeek: 3
                    estMinutesPerSession: 30
                    webUrl: http://127.0.0.1:8787/plans/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10
                    appUrl: trainingplans://plan/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10
        '304':
          description: |
            Not modified: the \`ETag\` sent in \`If-None-Match\` matches, or (without \`If-None-Match\`) the
            \`If-Modified-Since\` date is not older than \`Last-Modified\`. No body; a valid key is still required.
          headers:
            Cache-Control: { $ref: '#/components/headers/CacheControlPublic' }
            Vary: { $ref: '#/components/headers/VaryPlans' }
            ETag: { $ref: '#/components/headers/ETag' }
            Last-Modified: { $ref: '#/components/headers/LastModified' }
        '400': { $ref: '#/components/responses/InvalidDiscipline' }
        '401': { $ref: '#/components/responses/Unauthorized' }
        '429': { $ref: '#/components/responses/TooManyRequests' }
        '500': { $ref: '#/components/responses/InternalError' }
    options:
      tags: [ catalog ]
      operationId: preflightPlans
      summary: CORS preflight
      description: |
        Always 204 with no body and no key needed (a bad \`discipline\` is not looked at either). The CORS headers
        are there only when the operator has allowed an origin. \`OPTIONS /openapi.yaml\` answers the same.
      security: []
      responses:
        '204': { $ref: '#/components/responses/Preflight' }
  /openapi.yaml:
    get:
      tags: [ meta ]
      operationId: getOpenApi
      summary: This OpenAPI 3.1 description
      description: |
        No key needed (a key, even a wrong one, is ignored), and the query string is ignored. Use it to
        generate a client: its \`servers\` entry and the URLs of its examples name this deployment. Conditional
        requests get 304 as on \`/api/plans\`.
      security: []
      parameters:
        - $ref: '#/components/parameters/ifNoneMatch'
        - $ref: '#/components/parameters/ifModifiedSince'
      responses:
        '200':
          description: The OpenAPI document, with \`servers\` naming this deployment (never compressed).
          headers:
            Cache-Control: { $ref: '#/components/headers/CacheControlPublic' }
            Vary: { $ref: '#/components/headers/VaryAcceptEncoding' }
            ETag: { $ref: '#/components/headers/ETag' }
            Last-Modified: { $ref: '#/components/headers/LastModified' }
            X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
            Access-Control-Allow-Origin: { $ref: '#/components/headers/AccessControlAllowOrigin' }
          content:
            application/yaml; charset=utf-8:
              schema: { type: string }
        '304':
          description: |
            Not modified: the \`ETag\` sent in \`If-None-Match\` matches, or (without \`If-None-Match\`) the
            \`If-Modified-Since\` date is not older than \`Last-Modified\`. No body.
          headers:
            Cache-Control: { $ref: '#/components/headers/CacheControlPublic' }
            Vary: { $ref: '#/components/headers/VaryAcceptEncoding' }
            ETag: { $ref: '#/components/headers/ETag' }
            Last-Modified: { $ref: '#/components/headers/LastModified' }
        '500': { $ref: '#/components/responses/InternalError' }
  /plans/{id}:
    parameters:
      - $ref: '#/components/parameters/planId'
    get:
      tags: [ pages ]
      operationId: getPlanPage
      summary: A plan's web page (HTML, for people)
      description: |
        The page a plan's \`webUrl\` opens: what the catalog says about the plan, for a person who followed a
        partner's link. No key needed. An id that is not in the current catalog, or that is not a UUID, gets the
        not-found page.
      security: []
      parameters:
        - $ref: '#/components/parameters/ifNoneMatch'
        - $ref: '#/components/parameters/ifModifiedSince'
      responses:
        '200': { $ref: '#/components/responses/PlanPage' }
        '304': { $ref: '#/components/responses/PlanPageNotModified' }
        '404': { $ref: '#/components/responses/PlanPageNotFound' }
        '500': { $ref: '#/components/responses/InternalError' }
    head:
      tags: [ pages ]
      operationId: headPlanPage
      summary: The headers of a plan's web page
      description: The answer \`GET\` would give, headers only (no body). No key needed.
      security: []
      parameters:
        - $ref: '#/components/parameters/ifNoneMatch'
        - $ref: '#/components/parameters/ifModifiedSince'
      responses:
        '200': { $ref: '#/components/responses/PlanPage' }
        '304': { $ref: '#/components/responses/PlanPageNotModified' }
        '404': { $ref: '#/components/responses/PlanPageNotFound' }
        '500': { $ref: '#/components/responses/InternalError' }
components:
  securitySchemes:
    apiKey:
      type: apiKey
      in: header
      name: X-Api-Key
      description: |
        A key issued by the operator (\`tpc_\` followed by 43 characters). Send exactly one \`X-Api-Key\` header;
        a missing, unknown, revoked or expired key, or more than one, gets 401 (checked before \`discipline\`).
        Keep it on your server. A shared key, where the operator uses one, is held by every partner: a leak by
        any of them affects all of them.
  parameters:
    discipline:
      name: discipline
      in: query
      required: false
      description: |
        Filters the catalog to one discipline; omitted means everything. The parameter name is matched after
        percent-decoding and case-sensitively (\`Discipline\` is an unknown parameter and is ignored). When present
        it must occur once with exactly \`strength\` or \`running\` (percent-encoding allowed); anything else — empty,
        repeated, another case, a malformed escape — gets 400 (once the key has been accepted).
      schema: { $ref: '#/components/schemas/Discipline' }
    ifNoneMatch:
      name: If-None-Match
      in: header
      required: false
      description: An \`ETag\` from an earlier answer (or \`*\`); a match gets 304. When sent, \`If-Modified-Since\` is ignored.
      schema: { type: string }
    ifModifiedSince:
      name: If-Modified-Since
      in: header
      required: false
      description: |
        The \`Last-Modified\` date of an earlier answer (an HTTP-date such as \`Sun, 06 Nov 1994 08:49:37 GMT\`).
        When the copy has not changed since, the answer is 304. Ignored when \`If-None-Match\` is sent, and when
        it is not a valid HTTP-date.
      schema: { type: string }
    planId:
      name: id
      in: path
      required: true
      description: A plan's \`id\`, a UUID in any case (the page's canonical link uses lowercase).
      schema:
        type: string
        format: uuid
        pattern: ^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$
  headers:
    CacheControlPublic:
      description: Shared caches may keep the answer for 300 seconds.
      required: true
      schema: { type: string, const: 'public, max-age=300' }
    CacheControlNoStore:
      description: Error answers are never cached.
      required: true
      schema: { type: string, const: no-store }
    VaryPlans:
      description: The answer varies by key, and its encoding by \`Accept-Encoding\`.
      required: true
      schema: { type: string, const: 'X-Api-Key, Accept-Encoding' }
    VaryAcceptEncoding:
      description: The encoding of the answer varies by \`Accept-Encoding\`.
      required: true
      schema: { type: string, const: Accept-Encoding }
    ContentEncoding:
      description: Present when the body is compressed (you sent \`Accept-Encoding\` with \`br\` or \`gzip\`).
      required: false
      schema: { type: string, enum: [ br, gzip ] }
    WWWAuthenticate:
      description: The authentication challenge (RFC 9110) naming the header the key goes in.
      required: true
      schema: { type: string, const: 'ApiKey realm="catalog", header="X-Api-Key"' }
    ETag:
      description: Entity tag of this copy (weak when the body is compressed); send it back in \`If-None-Match\`.
      required: true
      schema: { type: string }
    OptionalETag:
      description: Entity tag of this copy, when the CDN has one; send it back in \`If-None-Match\`.
      required: false
      schema: { type: string }
    LastModified:
      description: When this copy of the file was written.
      required: false
      schema: { type: string }
    NoSniff:
      description: Browsers must not guess another content type.
      required: true
      schema: { type: string, const: nosniff }
    Allow:
      description: The methods \`/api/plans\` and \`/openapi.yaml\` accept.
      required: true
      schema: { type: string, const: 'GET, OPTIONS' }
    AllowPlanPage:
      description: The methods a plan page accepts.
      required: true
      schema: { type: string, const: 'GET, HEAD' }
    AccessControlAllowOrigin:
      description: The one origin the operator allowed; absent when CORS is off (the default).
      required: false
      schema: { type: string, format: uri }
    AccessControlAllowMethods:
      description: Present only when an origin is allowed.
      required: false
      schema: { type: string, const: 'GET, OPTIONS' }
    AccessControlAllowHeaders:
      description: Present only when an origin is allowed.
      required: false
      schema: { type: string, const: X-Api-Key }
    AccessControlMaxAge:
      description: Present only when an origin is allowed; seconds a browser may cache the preflight.
      required: false
      schema: { type: string, const: '600' }
    ContentSecurityPolicy:
      description: A policy that lets the page run no script at all and refuses to let other sites frame it.
      required: true
      schema: { type: string, minLength: 1 }
    ReferrerPolicy:
      description: How much of the page's address a followed link reveals.
      required: true
      schema: { type: string, minLength: 1 }
    XFrameOptions:
      description: When present, refuses framing (for browsers that predate \`frame-ancestors\`).
      required: false
      schema: { type: string, const: DENY }
  responses:
    Preflight:
      description: No body. CORS headers only when an origin is allowed.
      headers:
        Access-Control-Allow-Origin: { $ref: '#/components/headers/AccessControlAllowOrigin' }
        Access-Control-Allow-Methods: { $ref: '#/components/headers/AccessControlAllowMethods' }
        Access-Control-Allow-Headers: { $ref: '#/components/headers/AccessControlAllowHeaders' }
        Access-Control-Max-Age: { $ref: '#/components/headers/AccessControlMaxAge' }
    InvalidDiscipline:
      description: |
        \`discipline\` is present and not exactly one \`strength\` or \`running\`. Only given once the key has been
        accepted: with a missing or wrong key the answer is 401.
      headers:
        Cache-Control: { $ref: '#/components/headers/CacheControlNoStore' }
        X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
        Access-Control-Allow-Origin: { $ref: '#/components/headers/AccessControlAllowOrigin' }
      content:
        application/problem+json:
          schema:
            allOf:
              - $ref: '#/components/schemas/Problem'
              - properties:
                  type: { const: 'tag:training-plan-catalog,2026:problem:invalid-discipline' }
                  status: { const: 400 }
          example:
            type: tag:training-plan-catalog,2026:problem:invalid-discipline
            title: Bad Request
            status: 400
            detail: The discipline parameter, when present, must be exactly running or strength, once.
    TooManyRequests:
      description: >-
        Appears only where the operator turned rate limits on: this API key sent more requests than the operator's limit allows within its window. Wait \`Retry-After\` seconds, then retry. The edge firewall sends it before the gateway, so it is \`application/json\` (still a problem document) and carries no CORS header.
      headers:
        Retry-After:
          description: Seconds to wait before retrying (the operator's rate window, 60 to 600).
          required: true
          schema: { type: integer, minimum: 1 }
        Cache-Control: { $ref: '#/components/headers/CacheControlNoStore' }
        X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
      content:
        application/json:
          schema:
            allOf:
              - $ref: '#/components/schemas/Problem'
              - properties:
                  type: { const: 'tag:training-plan-catalog,2026:problem:rate-limited' }
                  status: { const: 429 }
    Unauthorized:
      description: |
        The \`X-Api-Key\` header is missing, or its value is wrong, revoked or expired, or it was sent more than
        once. Checked before \`discipline\`, so this answer wins over a 400.
      headers:
        WWW-Authenticate: { $ref: '#/components/headers/WWWAuthenticate' }
        Cache-Control: { $ref: '#/components/headers/CacheControlNoStore' }
        X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
        Access-Control-Allow-Origin: { $ref: '#/components/headers/AccessControlAllowOrigin' }
      content:
        application/problem+json:
          schema:
            allOf:
              - $ref: '#/components/schemas/Problem'
              - properties:
                  type: { const: 'tag:training-plan-catalog,2026:problem:unauthorized' }
                  status: { const: 401 }
    NotFound:
      description: |
        The answer to any path other than \`/api/plans\`, \`/openapi.yaml\` and the plan pages (for example
        \`/api/plans/\` or \`/catalog.json\`), whatever the method. Not an operation's answer: see "Answers that are
        not operations" in the description.
      headers:
        Cache-Control: { $ref: '#/components/headers/CacheControlNoStore' }
        X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
        Access-Control-Allow-Origin: { $ref: '#/components/headers/AccessControlAllowOrigin' }
      content:
        application/problem+json:
          schema:
            allOf:
              - $ref: '#/components/schemas/Problem'
              - properties:
                  type: { const: 'tag:training-plan-catalog,2026:problem:not-found' }
                  status: { const: 404 }
    MethodNotAllowed:
      description: |
        The answer to any method other than GET and OPTIONS on \`/api/plans\` and \`/openapi.yaml\` (HEAD included;
        a HEAD answer has no body), given before the key is looked at. Not an operation's answer: see "Answers
        that are not operations" in the description.
      headers:
        Allow: { $ref: '#/components/headers/Allow' }
        Cache-Control: { $ref: '#/components/headers/CacheControlNoStore' }
        X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
        Access-Control-Allow-Origin: { $ref: '#/components/headers/AccessControlAllowOrigin' }
      content:
        application/problem+json:
          schema:
            allOf:
              - $ref: '#/components/schemas/Problem'
              - properties:
                  type: { const: 'tag:training-plan-catalog,2026:problem:method-not-allowed' }
                  status: { const: 405 }
    PlanPage:
      description: The plan's page. A HEAD answer has the same headers and no body.
      headers:
        Cache-Control: { $ref: '#/components/headers/CacheControlPublic' }
        X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
        Content-Security-Policy: { $ref: '#/components/headers/ContentSecurityPolicy' }
        Referrer-Policy: { $ref: '#/components/headers/ReferrerPolicy' }
        X-Frame-Options: { $ref: '#/components/headers/XFrameOptions' }
        ETag: { $ref: '#/components/headers/OptionalETag' }
        Last-Modified: { $ref: '#/components/headers/LastModified' }
        Access-Control-Allow-Origin: { $ref: '#/components/headers/AccessControlAllowOrigin' }
      content:
        text/html; charset=utf-8:
          schema: { type: string }
    HomePage:
      description: |
        The home page: what this service is, how to call it, where partners ask for a key (the operator's contact
        address) and a link to download this document. The service answers it itself, the same everywhere. A
        HEAD answer has the same headers and no body.
      headers:
        Cache-Control: { $ref: '#/components/headers/CacheControlPublic' }
        X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
        Content-Security-Policy: { $ref: '#/components/headers/ContentSecurityPolicy' }
        Referrer-Policy: { $ref: '#/components/headers/ReferrerPolicy' }
        X-Frame-Options: { $ref: '#/components/headers/XFrameOptions' }
        Access-Control-Allow-Origin: { $ref: '#/components/headers/AccessControlAllowOrigin' }
      content:
        text/html; charset=utf-8:
          schema: { type: string }
    PlanPageNotModified:
      description: Not modified, as on \`/api/plans\`. No body.
      headers:
        Cache-Control: { $ref: '#/components/headers/CacheControlPublic' }
        ETag: { $ref: '#/components/headers/OptionalETag' }
        Last-Modified: { $ref: '#/components/headers/LastModified' }
    PlanPageNotFound:
      description: |
        The not-found page (HTML, for people), to GET and HEAD: an id that is not in the current catalog or is
        not a UUID, and any path under \`/plans/\` that is not a plan page (\`/plans/\`, \`/plans/a/b\`). It is the
        CDN's error page, where no code of this API runs, so it carries no CORS header, even when an origin is
        allowed.
      headers:
        X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
      content:
        text/html; charset=utf-8:
          schema: { type: string }
    PlanPageMethodNotAllowed:
      description: |
        The answer to any method other than GET and HEAD on a page: a plan page, any path under \`/plans/\`, or
        the home page \`/\` (OPTIONS included). Not an operation's answer: see "Answers that are not operations" in the description.
      headers:
        Allow: { $ref: '#/components/headers/AllowPlanPage' }
        Cache-Control: { $ref: '#/components/headers/CacheControlNoStore' }
        X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
        Access-Control-Allow-Origin: { $ref: '#/components/headers/AccessControlAllowOrigin' }
      content:
        application/problem+json:
          schema:
            allOf:
              - $ref: '#/components/schemas/Problem'
              - properties:
                  type: { const: 'tag:training-plan-catalog,2026:problem:method-not-allowed' }
                  status: { const: 405 }
    InternalError:
      description: |
        A server-side failure. Keep serving your last good copy and retry later. This answer is the CDN's error
        page, where no code of this API runs, so it carries no CORS header, even when an origin is allowed.
      headers:
        Cache-Control: { $ref: '#/components/headers/CacheControlNoStore' }
        X-Content-Type-Options: { $ref: '#/components/headers/NoSniff' }
      content:
        application/problem+json:
          schema:
            allOf:
              - $ref: '#/components/schemas/Problem'
              - properties:
                  type: { const: 'tag:training-plan-catalog,2026:problem:internal-error' }
                  status: { const: 500 }
  schemas:
    Catalog:
      type: object
      properties:
        generatedAt:
          type: string
          format: date-time
          pattern: ^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z))$
          description: "ISO 8601 UTC time at which the origin built this response. Not a freshness signal: a CDN copy can be about 25 hours old; never use it to decide that your cache is stale."
        plans:
          type: array
          items:
            $ref: "#/components/schemas/Plan"
          description: The full matching set, no pagination, ordered by discipline ascending, then title ascending (stable).
      required:
        - generatedAt
        - plans
      description: The catalog response.
    Discipline:
      type: string
      enum:
        - running
        - strength
      description: The discipline of a plan.
    Level:
      type: string
      enum:
        - none
        - beginner
        - intermediate
        - advanced
      description: Closed enum, never null. A plan without a level is reported as \`none\`.
    Plan:
      type: object
      properties:
        id:
          type: string
          pattern: ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$
          format: uuid
          description: UUID in lowercase. Stable; safe to store as a foreign key.
        title:
          type: string
          minLength: 1
          maxLength: 150
          description: "At most 150 characters (JavaScript's \`length\`: a character outside the Basic Multilingual Plane, such as an emoji, counts as two), trimmed; never a control character or a bidirectional embedding, override or isolate character (U+202A–U+202E, U+2066–U+2069)."
        summary:
          anyOf:
            - type: string
              maxLength: 500
            - type: "null"
          description: One- or two-sentence description, at most 500 characters (counted as \`title\` is), trimmed; the characters \`title\` never holds, but tabs and line breaks.
        coverUrl:
          anyOf:
            - type: string
              pattern: ^(https:\\/\\/\\S+|http:\\/\\/(127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}|localhost|\\[::1\\])(:\\d{1,5})?\\/\\S*)$
              format: uri
            - type: "null"
          description: Public image URL (https; only a local development stack serves its own covers over http on a loopback host); null when the plan has no cover, and clients render a fallback.
        level:
          $ref: "#/components/schemas/Level"
        discipline:
          $ref: "#/components/schemas/Discipline"
        disciplineLabel:
          type: string
          enum:
            - Outdoor
            - Workouts
          description: 'Display name of the discipline: "Outdoor" for running, "Workouts" for strength. Use this rather than capitalising \`discipline\`.'
        weeksCount:
          type: integer
          minimum: 1
          description: Programme length in weeks.
        daysPerWeek:
          anyOf:
            - type: integer
              minimum: 1
              maximum: 7
            - type: "null"
        estMinutesPerSession:
          anyOf:
            - type: integer
              minimum: 1
            - type: "null"
          description: Estimated minutes per session.
        webUrl:
          type: string
          format: uri
          description: "\`{base_url}/plans/{id}\`: the plan's web page, which anyone can open without a key (or the same path on the operator's own website). Always safe to render as a link."
        appUrl:
          type: string
          description: "\`{app_scheme}://plan/{id}\`: a deep link that works only where the companion app is installed. Link with \`webUrl\` unless you know the app is installed."
      required:
        - id
        - title
        - summary
        - coverUrl
        - level
        - discipline
        - disciplineLabel
        - weeksCount
        - daysPerWeek
        - estMinutesPerSession
        - webUrl
        - appUrl
      description: One published, approved training plan.
    Problem:
      type: object
      properties:
        type:
          type: string
          enum:
            - tag:training-plan-catalog,2026:problem:not-found
            - tag:training-plan-catalog,2026:problem:method-not-allowed
            - tag:training-plan-catalog,2026:problem:unauthorized
            - tag:training-plan-catalog,2026:problem:invalid-discipline
            - tag:training-plan-catalog,2026:problem:internal-error
            - tag:training-plan-catalog,2026:problem:rate-limited
          description: Stable identifier of the kind of error (a tag URI, not meant to be fetched); switch on it.
        title:
          type: string
          description: Short summary of the kind of error.
        status:
          type: integer
          minimum: 400
          maximum: 599
          description: The HTTP status of the answer.
        detail:
          type: string
          description: What went wrong in this case; never contains the key.
      required:
        - type
        - title
        - status
        - detail
      description: RFC 9457 problem details, \`application/problem+json\`.
`;
