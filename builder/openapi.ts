import { isMap, isScalar, isSeq, parseDocument, visit } from 'yaml';

/** Documents already rendered, by base URL: a process renders the one template for a base URL or two. */
const rendered = new Map<string, { readonly template: string; readonly document: string }>();

/**
 * The openapi.yaml served: the repository's with `servers`, and the examples' URLs on the template's server,
 * pointing at this deployment's base URL. Made once per template and base URL (YAML takes tens of ms).
 */
export function renderOpenApi(template: string, baseUrl: string): string {
  const known = rendered.get(baseUrl);
  if (known?.template === template) return known.document;
  const document = render(template, baseUrl);
  if (rendered.size >= 8) rendered.clear();
  rendered.set(baseUrl, { template, document });
  return document;
}

function render(template: string, baseUrl: string): string {
  const document = parseDocument(template);
  if (document.errors.length > 0)
    throw new Error(`openapi.yaml is not valid YAML: ${document.errors[0]?.message}`);
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
