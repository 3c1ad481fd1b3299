import { isMap, isScalar, isSeq, parseDocument, visit } from 'yaml';
import { CONTACT_PLACEHOLDER } from '../contract/index.ts';

/** Documents already rendered, by base URL and contact address: a process renders the one template once or twice. */
const rendered = new Map<string, { readonly template: string; readonly document: string }>();

/**
 * The openapi.yaml served: the repository's with `servers`, and the examples' URLs on the template's server,
 * pointing at this deployment's base URL; where partners ask for a key (`<CONTACT_ADDRESS>` in its description)
 * is the deployment's contact address, also its `info.contact`. Made once per template, base URL and address
 * (YAML takes tens of ms).
 */
export function renderOpenApi(template: string, baseUrl: string, contactAddress: string): string {
  const key = `${baseUrl} ${contactAddress}`;
  const known = rendered.get(key);
  if (known?.template === template) return known.document;
  const document = render(template, baseUrl, contactAddress);
  if (rendered.size >= 8) rendered.clear();
  rendered.set(key, { template, document });
  return document;
}

function render(template: string, baseUrl: string, contactAddress: string): string {
  const document = parseDocument(template);
  if (document.errors.length > 0)
    throw new Error(`openapi.yaml is not valid YAML: ${document.errors[0]?.message}`);
  const description = document.getIn(['info', 'description']);
  if (typeof description !== 'string' || !description.includes(CONTACT_PLACEHOLDER))
    throw new Error(
      `openapi.yaml's info.description no longer says where keys come from (${CONTACT_PLACEHOLDER})`,
    );
  document.setIn(['info', 'description'], description.replaceAll(CONTACT_PLACEHOLDER, contactAddress));
  document.setIn(
    ['info', 'contact'],
    contactAddress.startsWith('https://') ? { url: contactAddress } : { email: contactAddress },
  );
  const templateBase = document.getIn(['servers', 0, 'url']);
  if (typeof templateBase === 'string' && templateBase !== baseUrl) {
    visit(document, {
      Pair(_key, pair) {
        if (!isScalar(pair.key) || (pair.key.value !== 'example' && pair.key.value !== 'examples')) return;
        if (isMap(pair.value) || isSeq(pair.value) || isScalar(pair.value))
          visit(pair.value, {
            Scalar(_k, scalar) {
              const value = scalar.value;
              if (typeof value === 'string' && startsWithBase(value, templateBase))
                scalar.value = baseUrl + value.slice(templateBase.length);
            },
          });
        return visit.SKIP;
      },
    });
  }
  document.set('servers', [{ url: baseUrl, description: 'This deployment' }]);
  return document.toString({ lineWidth: 0 });
}

/** Whether `value` is `base` itself or a URL under it (`base/…`, `base?…`), not `base` followed by more host. */
function startsWithBase(value: string, base: string): boolean {
  return value === base || (value.startsWith(base) && /^[/?#]/.test(value.slice(base.length)));
}
