import { isMap, isScalar, isSeq, parseDocument, visit } from 'yaml';

/**
 * The openapi.yaml served at `{base_url}/openapi.yaml`: the repository's document with `servers` pointing at
 * this deployment's base URL, so a generated client needs no configuration, and every URL of its examples that
 * names the template's server (a plan's `webUrl`, say) naming this deployment instead.
 */
export function renderOpenApi(template: string, baseUrl: string): string {
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
