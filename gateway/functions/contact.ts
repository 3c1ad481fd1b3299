/**
 * The contact address in the viewer-request function's 401 (contract/index.ts PROBLEM_UNAUTHORIZED): the bundle
 * holds {@link CONTACT_PLACEHOLDER} once, and whatever runs it fills the placeholder in first — the CDK stack with
 * the deployment's `contactAddress`, the local edge with its own (`catalog serve --contact-address`), the tests
 * with the local stack's. One mechanism, so CloudFront and the local edge run the same bytes but the address.
 */
import { CONTACT_PLACEHOLDER } from '../../contract/index.ts';

/** What an address may not hold: it lands inside a JavaScript string literal of the bundle. */
const UNSAFE = /[\s"'`\\<>{}$]/;

/** The function's code with the contact address in the placeholder's place; throws when it cannot be filled. */
export function fillContactAddress(code: string, address: string): string {
  if (address === '' || UNSAFE.test(address))
    throw new Error(`contact address ${JSON.stringify(address)}: cannot be written into the function`);
  const parts = code.split(CONTACT_PLACEHOLDER);
  if (parts.length !== 2)
    throw new Error(
      `the viewer-request bundle holds ${CONTACT_PLACEHOLDER} ${parts.length - 1} times, not once: rebuild it (npm run build)`,
    );
  return parts.join(address);
}

/**
 * The problem document's detail with `address` in the placeholder's place: what the 401 says once its function
 * is filled (the judge of the case table compares with it).
 */
export function filledDetail(detail: string, address: string): string {
  return detail.replace(CONTACT_PLACEHOLDER, address);
}
