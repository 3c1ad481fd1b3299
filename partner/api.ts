/**
 * Generated from openapi.yaml by openapi-typescript (npm run openapi:sync). Do not edit.
 */

export interface paths {
    "/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The home page (HTML, for people)
         * @description What this service is, how to call it (the path, the key's header, the discipline parameter) and where
         *     partners ask for a key (the operator's contact address), with a link to download this document: for a
         *     person who opened the service's address. No key needed (a key, even a wrong one, is ignored), and the
         *     query string is ignored.
         */
        get: operations["getHomePage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * The headers of the home page
         * @description The answer `GET` would give, headers only (no body). No key needed.
         */
        head: operations["headHomePage"];
        patch?: never;
        trace?: never;
    };
    "/api/plans": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List every published, approved training plan
         * @description Returns the full catalog, or the plans of one discipline, sorted by discipline, then by title as
         *     `new Intl.Collator('en').compare` orders titles, then by `id`. Any query parameter other than
         *     `discipline` is ignored and does not bypass the cache.
         *
         *     The key is checked before `discipline`: a missing or wrong key gets 401 even when `discipline` is
         *     invalid too. A conditional request (`If-None-Match` or `If-Modified-Since`) still needs a valid key:
         *     without one the answer is 401, never 304.
         */
        get: operations["listPlans"];
        put?: never;
        post?: never;
        delete?: never;
        /**
         * CORS preflight
         * @description Always 204 with no body and no key needed (a bad `discipline` is not looked at either). The CORS headers
         *     are there only when the operator has allowed an origin. `OPTIONS /openapi.yaml` answers the same.
         */
        options: operations["preflightPlans"];
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.yaml": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This OpenAPI 3.1 description
         * @description No key needed (a key, even a wrong one, is ignored), and the query string is ignored. Use it to
         *     generate a client: its `servers` entry and the URLs of its examples name this deployment. Conditional
         *     requests get 304 as on `/api/plans`.
         */
        get: operations["getOpenApi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/plans/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A plan's `id`, a UUID in any case (the page's canonical link uses lowercase). */
                id: components["parameters"]["planId"];
            };
            cookie?: never;
        };
        /**
         * A plan's web page (HTML, for people)
         * @description The page a plan's `webUrl` opens: what the catalog says about the plan, for a person who followed a
         *     partner's link. No key needed. An id that is not in the current catalog, or that is not a UUID, gets the
         *     not-found page.
         */
        get: operations["getPlanPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * The headers of a plan's web page
         * @description The answer `GET` would give, headers only (no body). No key needed.
         */
        head: operations["headPlanPage"];
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description The catalog response. */
        Catalog: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC time at which the origin built this response. Not a freshness signal: a CDN copy can be about 25 hours old; never use it to decide that your cache is stale.
             */
            generatedAt: string;
            /** @description The full matching set, no pagination, ordered by discipline ascending, then title ascending (stable). */
            plans: components["schemas"]["Plan"][];
        };
        /**
         * @description The discipline of a plan.
         * @enum {string}
         */
        Discipline: "running" | "strength";
        /**
         * @description Closed enum, never null. A plan without a level is reported as `none`.
         * @enum {string}
         */
        Level: "none" | "beginner" | "intermediate" | "advanced";
        /** @description One published, approved training plan. */
        Plan: {
            /**
             * Format: uuid
             * @description UUID in lowercase. Stable; safe to store as a foreign key.
             */
            id: string;
            /** @description At most 150 characters (JavaScript's `length`: a character outside the Basic Multilingual Plane, such as an emoji, counts as two), trimmed; never a control character or a bidirectional embedding, override or isolate character (U+202A–U+202E, U+2066–U+2069). */
            title: string;
            /** @description One- or two-sentence description, at most 500 characters (counted as `title` is), trimmed; the characters `title` never holds, but tabs and line breaks. */
            summary: string | null;
            /** @description Public image URL (https; only a local development stack serves its own covers over http on a loopback host); null when the plan has no cover, and clients render a fallback. */
            coverUrl: string | null;
            level: components["schemas"]["Level"];
            discipline: components["schemas"]["Discipline"];
            /**
             * @description Display name of the discipline: "Outdoor" for running, "Workouts" for strength. Use this rather than capitalising `discipline`.
             * @enum {string}
             */
            disciplineLabel: "Outdoor" | "Workouts";
            /** @description Programme length in weeks. */
            weeksCount: number;
            daysPerWeek: number | null;
            /** @description Estimated minutes per session. */
            estMinutesPerSession: number | null;
            /**
             * Format: uri
             * @description `{base_url}/plans/{id}`: the plan's web page, which anyone can open without a key (or the same path on the operator's own website). Always safe to render as a link.
             */
            webUrl: string;
            /** @description `{app_scheme}://plan/{id}`: a deep link that works only where the companion app is installed. Link with `webUrl` unless you know the app is installed. */
            appUrl: string;
        };
        /** @description RFC 9457 problem details, `application/problem+json`. */
        Problem: {
            /**
             * @description Stable identifier of the kind of error (a tag URI, not meant to be fetched); switch on it.
             * @enum {string}
             */
            type: "tag:training-plan-catalog,2026:problem:not-found" | "tag:training-plan-catalog,2026:problem:method-not-allowed" | "tag:training-plan-catalog,2026:problem:unauthorized" | "tag:training-plan-catalog,2026:problem:invalid-discipline" | "tag:training-plan-catalog,2026:problem:internal-error" | "tag:training-plan-catalog,2026:problem:rate-limited";
            /** @description Short summary of the kind of error. */
            title: string;
            /** @description The HTTP status of the answer. */
            status: number;
            /** @description What went wrong in this case; never contains the key. */
            detail: string;
        };
    };
    responses: {
        /** @description No body. CORS headers only when an origin is allowed. */
        Preflight: {
            headers: {
                "Access-Control-Allow-Origin": components["headers"]["AccessControlAllowOrigin"];
                "Access-Control-Allow-Methods": components["headers"]["AccessControlAllowMethods"];
                "Access-Control-Allow-Headers": components["headers"]["AccessControlAllowHeaders"];
                "Access-Control-Max-Age": components["headers"]["AccessControlMaxAge"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /**
         * @description `discipline` is present and not exactly one `strength` or `running`. Only given once the key has been
         *     accepted: with a missing or wrong key the answer is 401.
         */
        InvalidDiscipline: {
            headers: {
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                "X-Content-Type-Options": components["headers"]["NoSniff"];
                "Access-Control-Allow-Origin": components["headers"]["AccessControlAllowOrigin"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "type": "tag:training-plan-catalog,2026:problem:invalid-discipline",
                 *       "title": "Bad Request",
                 *       "status": 400,
                 *       "detail": "The discipline parameter, when present, must be exactly running or strength, once."
                 *     }
                 */
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @constant */
                    type?: "tag:training-plan-catalog,2026:problem:invalid-discipline";
                    /** @constant */
                    status?: 400;
                };
            };
        };
        /** @description Appears only where the operator turned rate limits on: this API key sent more requests than the operator's limit allows within its window. Wait `Retry-After` seconds, then retry. The edge firewall sends it before the gateway, so it is `application/json` (still a problem document) and carries no CORS header. */
        TooManyRequests: {
            headers: {
                /** @description Seconds to wait before retrying (the operator's rate window, 60 to 600). */
                "Retry-After": number;
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                "X-Content-Type-Options": components["headers"]["NoSniff"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Problem"] & {
                    /** @constant */
                    type?: "tag:training-plan-catalog,2026:problem:rate-limited";
                    /** @constant */
                    status?: 429;
                };
            };
        };
        /**
         * @description The `X-Api-Key` header is missing, or its value is wrong, revoked or expired, or it was sent more than
         *     once. Checked before `discipline`, so this answer wins over a 400.
         */
        Unauthorized: {
            headers: {
                "WWW-Authenticate": components["headers"]["WWWAuthenticate"];
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                "X-Content-Type-Options": components["headers"]["NoSniff"];
                "Access-Control-Allow-Origin": components["headers"]["AccessControlAllowOrigin"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @constant */
                    type?: "tag:training-plan-catalog,2026:problem:unauthorized";
                    /** @constant */
                    status?: 401;
                };
            };
        };
        /**
         * @description The answer to any path other than `/api/plans`, `/openapi.yaml` and the plan pages (for example
         *     `/api/plans/` or `/catalog.json`), whatever the method. Not an operation's answer: see "Answers that are
         *     not operations" in the description.
         */
        NotFound: {
            headers: {
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                "X-Content-Type-Options": components["headers"]["NoSniff"];
                "Access-Control-Allow-Origin": components["headers"]["AccessControlAllowOrigin"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @constant */
                    type?: "tag:training-plan-catalog,2026:problem:not-found";
                    /** @constant */
                    status?: 404;
                };
            };
        };
        /**
         * @description The answer to any method other than GET and OPTIONS on `/api/plans` and `/openapi.yaml` (HEAD included;
         *     a HEAD answer has no body), given before the key is looked at. Not an operation's answer: see "Answers
         *     that are not operations" in the description.
         */
        MethodNotAllowed: {
            headers: {
                Allow: components["headers"]["Allow"];
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                "X-Content-Type-Options": components["headers"]["NoSniff"];
                "Access-Control-Allow-Origin": components["headers"]["AccessControlAllowOrigin"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @constant */
                    type?: "tag:training-plan-catalog,2026:problem:method-not-allowed";
                    /** @constant */
                    status?: 405;
                };
            };
        };
        /** @description The plan's page. A HEAD answer has the same headers and no body. */
        PlanPage: {
            headers: {
                "Cache-Control": components["headers"]["CacheControlPublic"];
                "X-Content-Type-Options": components["headers"]["NoSniff"];
                "Content-Security-Policy": components["headers"]["ContentSecurityPolicy"];
                "Referrer-Policy": components["headers"]["ReferrerPolicy"];
                "X-Frame-Options": components["headers"]["XFrameOptions"];
                ETag: components["headers"]["OptionalETag"];
                "Last-Modified": components["headers"]["LastModified"];
                "Access-Control-Allow-Origin": components["headers"]["AccessControlAllowOrigin"];
                [name: string]: unknown;
            };
            content: {
                "text/html; charset=utf-8": string;
            };
        };
        /**
         * @description The home page: what this service is, how to call it, where partners ask for a key (the operator's contact
         *     address) and a link to download this document. The service answers it itself, the same everywhere. A
         *     HEAD answer has the same headers and no body.
         */
        HomePage: {
            headers: {
                "Cache-Control": components["headers"]["CacheControlPublic"];
                "X-Content-Type-Options": components["headers"]["NoSniff"];
                "Content-Security-Policy": components["headers"]["ContentSecurityPolicy"];
                "Referrer-Policy": components["headers"]["ReferrerPolicy"];
                "X-Frame-Options": components["headers"]["XFrameOptions"];
                "Access-Control-Allow-Origin": components["headers"]["AccessControlAllowOrigin"];
                [name: string]: unknown;
            };
            content: {
                "text/html; charset=utf-8": string;
            };
        };
        /** @description Not modified, as on `/api/plans`. No body. */
        PlanPageNotModified: {
            headers: {
                "Cache-Control": components["headers"]["CacheControlPublic"];
                ETag: components["headers"]["OptionalETag"];
                "Last-Modified": components["headers"]["LastModified"];
                [name: string]: unknown;
            };
            content?: never;
        };
        /**
         * @description The not-found page (HTML, for people), to GET and HEAD: an id that is not in the current catalog or is
         *     not a UUID, and any path under `/plans/` that is not a plan page (`/plans/`, `/plans/a/b`). It is the
         *     CDN's error page, where no code of this API runs, so it carries no CORS header, even when an origin is
         *     allowed.
         */
        PlanPageNotFound: {
            headers: {
                "X-Content-Type-Options": components["headers"]["NoSniff"];
                [name: string]: unknown;
            };
            content: {
                "text/html; charset=utf-8": string;
            };
        };
        /**
         * @description The answer to any method other than GET and HEAD on a page: a plan page, any path under `/plans/`, or
         *     the home page `/` (OPTIONS included). Not an operation's answer: see "Answers that are not operations" in the description.
         */
        PlanPageMethodNotAllowed: {
            headers: {
                Allow: components["headers"]["AllowPlanPage"];
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                "X-Content-Type-Options": components["headers"]["NoSniff"];
                "Access-Control-Allow-Origin": components["headers"]["AccessControlAllowOrigin"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @constant */
                    type?: "tag:training-plan-catalog,2026:problem:method-not-allowed";
                    /** @constant */
                    status?: 405;
                };
            };
        };
        /**
         * @description A server-side failure. Keep serving your last good copy and retry later. This answer is the CDN's error
         *     page, where no code of this API runs, so it carries no CORS header, even when an origin is allowed.
         */
        InternalError: {
            headers: {
                "Cache-Control": components["headers"]["CacheControlNoStore"];
                "X-Content-Type-Options": components["headers"]["NoSniff"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"] & {
                    /** @constant */
                    type?: "tag:training-plan-catalog,2026:problem:internal-error";
                    /** @constant */
                    status?: 500;
                };
            };
        };
    };
    parameters: {
        /**
         * @description Filters the catalog to one discipline; omitted means everything. The parameter name is matched after
         *     percent-decoding and case-sensitively (`Discipline` is an unknown parameter and is ignored). When present
         *     it must occur once with exactly `strength` or `running` (percent-encoding allowed); anything else — empty,
         *     repeated, another case, a malformed escape — gets 400 (once the key has been accepted).
         */
        discipline: components["schemas"]["Discipline"];
        /** @description An `ETag` from an earlier answer (or `*`); a match gets 304. When sent, `If-Modified-Since` is ignored. */
        ifNoneMatch: string;
        /**
         * @description The `Last-Modified` date of an earlier answer (an HTTP-date such as `Sun, 06 Nov 1994 08:49:37 GMT`).
         *     When the copy has not changed since, the answer is 304. Ignored when `If-None-Match` is sent, and when
         *     it is not a valid HTTP-date.
         */
        ifModifiedSince: string;
        /** @description A plan's `id`, a UUID in any case (the page's canonical link uses lowercase). */
        planId: string;
    };
    requestBodies: never;
    headers: {
        /** @description Shared caches may keep the answer for 300 seconds. */
        CacheControlPublic: "public, max-age=300";
        /** @description Error answers are never cached. */
        CacheControlNoStore: "no-store";
        /** @description The answer varies by key, and its encoding by `Accept-Encoding`. */
        VaryPlans: "X-Api-Key, Accept-Encoding";
        /** @description The encoding of the answer varies by `Accept-Encoding`. */
        VaryAcceptEncoding: "Accept-Encoding";
        /** @description Present when the body is compressed (you sent `Accept-Encoding` with `br` or `gzip`). */
        ContentEncoding: "br" | "gzip";
        /** @description The authentication challenge (RFC 9110) naming the header the key goes in. */
        WWWAuthenticate: "ApiKey realm=\"catalog\", header=\"X-Api-Key\"";
        /** @description Entity tag of this copy (weak when the body is compressed); send it back in `If-None-Match`. */
        ETag: string;
        /** @description Entity tag of this copy, when the CDN has one; send it back in `If-None-Match`. */
        OptionalETag: string;
        /** @description When this copy of the file was written. */
        LastModified: string;
        /** @description Browsers must not guess another content type. */
        NoSniff: "nosniff";
        /** @description The methods `/api/plans` and `/openapi.yaml` accept. */
        Allow: "GET, OPTIONS";
        /** @description The methods a plan page accepts. */
        AllowPlanPage: "GET, HEAD";
        /** @description The one origin the operator allowed; absent when CORS is off (the default). */
        AccessControlAllowOrigin: string;
        /** @description Present only when an origin is allowed. */
        AccessControlAllowMethods: "GET, OPTIONS";
        /** @description Present only when an origin is allowed. */
        AccessControlAllowHeaders: "X-Api-Key";
        /** @description Present only when an origin is allowed; seconds a browser may cache the preflight. */
        AccessControlMaxAge: "600";
        /** @description A policy that lets the page run no script at all and refuses to let other sites frame it. */
        ContentSecurityPolicy: string;
        /** @description How much of the page's address a followed link reveals. */
        ReferrerPolicy: string;
        /** @description When present, refuses framing (for browsers that predate `frame-ancestors`). */
        XFrameOptions: "DENY";
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHomePage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["HomePage"];
        };
    };
    headHomePage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["HomePage"];
        };
    };
    listPlans: {
        parameters: {
            query?: {
                /**
                 * @description Filters the catalog to one discipline; omitted means everything. The parameter name is matched after
                 *     percent-decoding and case-sensitively (`Discipline` is an unknown parameter and is ignored). When present
                 *     it must occur once with exactly `strength` or `running` (percent-encoding allowed); anything else — empty,
                 *     repeated, another case, a malformed escape — gets 400 (once the key has been accepted).
                 */
                discipline?: components["parameters"]["discipline"];
            };
            header?: {
                /** @description An `ETag` from an earlier answer (or `*`); a match gets 304. When sent, `If-Modified-Since` is ignored. */
                "If-None-Match"?: components["parameters"]["ifNoneMatch"];
                /**
                 * @description The `Last-Modified` date of an earlier answer (an HTTP-date such as `Sun, 06 Nov 1994 08:49:37 GMT`).
                 *     When the copy has not changed since, the answer is 304. Ignored when `If-None-Match` is sent, and when
                 *     it is not a valid HTTP-date.
                 */
                "If-Modified-Since"?: components["parameters"]["ifModifiedSince"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The catalog (or one discipline's part of it). */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlPublic"];
                    Vary: components["headers"]["VaryPlans"];
                    ETag: components["headers"]["ETag"];
                    "Last-Modified": components["headers"]["LastModified"];
                    "Content-Encoding": components["headers"]["ContentEncoding"];
                    "X-Content-Type-Options": components["headers"]["NoSniff"];
                    "Access-Control-Allow-Origin": components["headers"]["AccessControlAllowOrigin"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "generatedAt": "2026-11-21T08:00:00.000Z",
                     *       "plans": [
                     *         {
                     *           "id": "0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10",
                     *           "title": "Couch to 5K",
                     *           "summary": "Walk-run intervals that build to thirty minutes of continuous running.",
                     *           "coverUrl": "https://images.trainingplans.example/covers/couch-to-5k.jpg",
                     *           "level": "beginner",
                     *           "discipline": "running",
                     *           "disciplineLabel": "Outdoor",
                     *           "weeksCount": 9,
                     *           "daysPerWeek": 3,
                     *           "estMinutesPerSession": 30,
                     *           "webUrl": "http://127.0.0.1:8787/plans/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10",
                     *           "appUrl": "trainingplans://plan/0b6e8a8e-6c1e-4b8e-9a4e-6f7c3f1d2a10"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json; charset=utf-8": components["schemas"]["Catalog"];
                };
            };
            /**
             * @description Not modified: the `ETag` sent in `If-None-Match` matches, or (without `If-None-Match`) the
             *     `If-Modified-Since` date is not older than `Last-Modified`. No body; a valid key is still required.
             */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlPublic"];
                    Vary: components["headers"]["VaryPlans"];
                    ETag: components["headers"]["ETag"];
                    "Last-Modified": components["headers"]["LastModified"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidDiscipline"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
        };
    };
    preflightPlans: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            204: components["responses"]["Preflight"];
        };
    };
    getOpenApi: {
        parameters: {
            query?: never;
            header?: {
                /** @description An `ETag` from an earlier answer (or `*`); a match gets 304. When sent, `If-Modified-Since` is ignored. */
                "If-None-Match"?: components["parameters"]["ifNoneMatch"];
                /**
                 * @description The `Last-Modified` date of an earlier answer (an HTTP-date such as `Sun, 06 Nov 1994 08:49:37 GMT`).
                 *     When the copy has not changed since, the answer is 304. Ignored when `If-None-Match` is sent, and when
                 *     it is not a valid HTTP-date.
                 */
                "If-Modified-Since"?: components["parameters"]["ifModifiedSince"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI document, with `servers` naming this deployment (never compressed). */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlPublic"];
                    Vary: components["headers"]["VaryAcceptEncoding"];
                    ETag: components["headers"]["ETag"];
                    "Last-Modified": components["headers"]["LastModified"];
                    "X-Content-Type-Options": components["headers"]["NoSniff"];
                    "Access-Control-Allow-Origin": components["headers"]["AccessControlAllowOrigin"];
                    [name: string]: unknown;
                };
                content: {
                    "application/yaml; charset=utf-8": string;
                };
            };
            /**
             * @description Not modified: the `ETag` sent in `If-None-Match` matches, or (without `If-None-Match`) the
             *     `If-Modified-Since` date is not older than `Last-Modified`. No body.
             */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["CacheControlPublic"];
                    Vary: components["headers"]["VaryAcceptEncoding"];
                    ETag: components["headers"]["ETag"];
                    "Last-Modified": components["headers"]["LastModified"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            500: components["responses"]["InternalError"];
        };
    };
    getPlanPage: {
        parameters: {
            query?: never;
            header?: {
                /** @description An `ETag` from an earlier answer (or `*`); a match gets 304. When sent, `If-Modified-Since` is ignored. */
                "If-None-Match"?: components["parameters"]["ifNoneMatch"];
                /**
                 * @description The `Last-Modified` date of an earlier answer (an HTTP-date such as `Sun, 06 Nov 1994 08:49:37 GMT`).
                 *     When the copy has not changed since, the answer is 304. Ignored when `If-None-Match` is sent, and when
                 *     it is not a valid HTTP-date.
                 */
                "If-Modified-Since"?: components["parameters"]["ifModifiedSince"];
            };
            path: {
                /** @description A plan's `id`, a UUID in any case (the page's canonical link uses lowercase). */
                id: components["parameters"]["planId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["PlanPage"];
            304: components["responses"]["PlanPageNotModified"];
            404: components["responses"]["PlanPageNotFound"];
            500: components["responses"]["InternalError"];
        };
    };
    headPlanPage: {
        parameters: {
            query?: never;
            header?: {
                /** @description An `ETag` from an earlier answer (or `*`); a match gets 304. When sent, `If-Modified-Since` is ignored. */
                "If-None-Match"?: components["parameters"]["ifNoneMatch"];
                /**
                 * @description The `Last-Modified` date of an earlier answer (an HTTP-date such as `Sun, 06 Nov 1994 08:49:37 GMT`).
                 *     When the copy has not changed since, the answer is 304. Ignored when `If-None-Match` is sent, and when
                 *     it is not a valid HTTP-date.
                 */
                "If-Modified-Since"?: components["parameters"]["ifModifiedSince"];
            };
            path: {
                /** @description A plan's `id`, a UUID in any case (the page's canonical link uses lowercase). */
                id: components["parameters"]["planId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: components["responses"]["PlanPage"];
            304: components["responses"]["PlanPageNotModified"];
            404: components["responses"]["PlanPageNotFound"];
            500: components["responses"]["InternalError"];
        };
    };
}
