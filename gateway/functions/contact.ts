/**
 * The contact address in the viewer-request function's answers — the 401's detail (contract/index.ts
 * PROBLEM_UNAUTHORIZED) and the home page (`homePage`) — is {@link CONTACT_PLACEHOLDER} in the bundle, and whatever
 * runs it fills every placeholder in first: the CDK stack with the deployment's `contactAddress`, the local edge
 * with its own (`catalog serve --contact-address`), the tests with the local stack's. One mechanism, so
 * CloudFront and the local edge run the same bytes but the address.
 */
import { CONTACT_PLACEHOLDER } from '../../contract/index.ts';

/** What an address may not hold: it lands inside a JavaScript string literal of the bundle, and in HTML. */
const UNSAFE = /[\s"'`\\<>{}$]/;

/**
 * The function's code with the contact address in each placeholder's place; throws when the address cannot be
 * written there, or the code holds no placeholder (a bundle built before it had one, or filled already).
 */
export function fillContactAddress(code: string, address: string): string {
  if (address === '' || UNSAFE.test(address))
    throw new Error(`contact address ${JSON.stringify(address)}: cannot be written into the function`);
  const parts = code.split(CONTACT_PLACEHOLDER);
  if (parts.length < 2)
    throw new Error(
      `the viewer-request bundle holds no ${CONTACT_PLACEHOLDER} to fill: rebuild it (npm run build)`,
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
