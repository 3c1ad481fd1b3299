import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../testing/cli.ts';
import { useScratchDir } from '../../testing/scratch.ts';
import {
  bundleFunction,
  checkFunctionCode,
  FUNCTION_SIZE_LIMIT,
  FUNCTION_SIZE_TARGET,
  FunctionBundleError,
  functionUses,
} from './bundle.ts';

const wrap = (body: string) =>
  `import cf from "cloudfront";\nvar crypto = require("crypto");\n${body}\nasync function handler(event) { return event.request; }`;

describe('the function bundle check', () => {
  it('accepts both built functions', async () => {
    for (const name of ['viewer-request', 'viewer-response']) {
      const code = await readFile(join(ROOT, 'dist/gateway', `${name}.js`), 'utf8');
      expect(checkFunctionCode(code), name).toEqual([]);
      expect(code).toMatch(/^import [\w$]+ ?from ?"cloudfront";\n/);
      expect(code).not.toMatch(/\bexport\b/);
      expect(code).toMatch(/\nasync function handler\(e\)\{return [\w$]+\(e\)\}\n$/);
    }
  });

  it('keeps both built functions within the 8.5 KB aim (room under the 10 KB limit to grow)', async () => {
    for (const name of ['viewer-request', 'viewer-response']) {
      const code = await readFile(join(ROOT, 'dist/gateway', `${name}.js`));
      expect(code.length, name).toBeLessThanOrEqual(FUNCTION_SIZE_TARGET);
    }
  });

  it.each([
    ['for-of', 'function f(a) { for (var x of a) {} }', /ForOfStatement/],
    ['a class', 'class A {}', /ClassDeclaration/],
    ['destructuring', 'function f(o) { var { a } = o; return a; }', /ObjectPattern/],
    ['spread', 'function f(a) { return [...a]; }', /SpreadElement/],
    ['optional chaining', 'function f(o) { return o?.a; }', /ChainExpression/],
    ['??', 'function f(o) { return o ?? 1; }', /\?\?/],
    ['a default parameter', 'function f(a = 1) { return a; }', /AssignmentPattern/],
    ['a generator', 'function* g() { yield 1; }', /generator|YieldExpression/],
    ['an async arrow', 'var f = async () => 1;', /async function that is not top-level/],
    ['a shorthand property', 'function f(a) { return { a }; }', /shorthand/],
    ['catch without a binding', 'function f() { try { f(); } catch { } }', /catch without a binding/],
    ['a second require', 'var fs = require("fs");', /only crypto, querystring and buffer/],
    ['a computed require', 'var m = "fs"; var x = require(m);', /only crypto, querystring and buffer/],
    ['another import', 'import other from "other";', /only "import cf from 'cloudfront'" is allowed/],
    ['eval', 'function f() { return eval("1"); }', /eval/],
    ['the Function constructor', 'function f() { return new Function("return 1"); }', /Function constructor/],
    [
      'await in call arguments',
      'async function handler2(e) { return String(await e); }',
      /await inside call arguments/,
    ],
    ['a tagged template', 'function f(t) { return t`x`; }', /TaggedTemplateExpression/],
    [
      'a global the runtime lacks',
      'function f(o) { return structuredClone(o); }',
      /global structuredClone is not/,
    ],
    ['a method the runtime lacks', 'function f(a) { return a.flatMap(f); }', /method flatMap is not/],
    [
      'a member the runtime lacks',
      'function f() { return Object.fromEntries([]); }',
      /global Object.fromEntries/,
    ],
    [
      'a crypto function the runtime lacks',
      'function f() { return crypto.randomUUID(); }',
      /runtime crypto.randomUUID/,
    ],
    [
      'a store method the runtime lacks',
      'async function f() { await cf.kvs().put("k", "v"); }',
      /KeyValueStore.put/,
    ],
  ])('refuses %s', (_name, body, reason) => {
    const problems = checkFunctionCode(wrap(body));
    expect(problems.join('; ')).toMatch(reason);
  });

  it('finds what the code uses of its runtime through the names it binds, and not what a local name shadows', () => {
    const code = `import cf from "cloudfront";
var kvs = cf.kvs(), h = require("crypto").createHash;
function digest(text) { var hash = require("crypto").createHash("sha1"); return hash.update(text).digest("hex"); }
function shadowed(JSON, cf) { var kvs = {}; return JSON.parse(kvs.get(cf.kvs)); }
async function handler(event) {
  var names = Object.keys(event.request.headers);
  try { await kvs.get(names.join(",").trim()); } catch (Date) { Date.now(); }
  return h;
}`;
    expect(functionUses(code)).toEqual([
      'global Object',
      'global Object.keys',
      'global require',
      'method get',
      'method join',
      'method now',
      'method parse',
      'method trim',
      'runtime Hash.digest',
      'runtime Hash.update',
      'runtime KeyValueStore.get',
      'runtime cloudfront',
      'runtime cloudfront.kvs',
      'runtime crypto',
      'runtime crypto.createHash',
    ]);
  });

  it('refuses code without a top-level handler', () => {
    expect(checkFunctionCode('function other() {}')).toContain('no top-level function named handler');
  });

  it('refuses code over 10 KB', () => {
    const problems = checkFunctionCode(wrap(`var big = "${'x'.repeat(FUNCTION_SIZE_LIMIT)}";`));
    expect(problems.join('; ')).toMatch(/over CloudFront's 10240-byte limit/);
  });
});

describe('bundling a function', () => {
  const scratch = useScratchDir({ each: false });

  async function bundle(source: string) {
    const file = join(scratch.dir, `fn-${Math.random().toString(36).slice(2)}.ts`);
    await writeFile(file, source);
    return bundleFunction(file);
  }

  it('turns a module into the runtime script form', async () => {
    const code = await bundle(
      "import cf from 'cloudfront';\nimport crypto from 'crypto';\nconst kvs = cf.kvs();\nexport async function handler(event: { request: unknown }) {\n  await kvs.exists(crypto.createHash('md5').update('x').digest('hex'));\n  return event.request;\n}\n",
    );
    expect(code).toMatch(/^import [\w$]+ ?from ?"cloudfront";\n/);
    expect(code).toContain('require("crypto")');
    expect(code).toMatch(/async function handler\(/);
    expect(checkFunctionCode(code)).toEqual([]);
  });

  it('fails for a deliberately bad function, listing the reasons', async () => {
    await expect(
      bundle(
        "import fs from 'fs';\nexport function handler(event: { a: number[] }) {\n  for (const x of event.a) fs.readFileSync(String(x));\n  return event;\n}\n",
      ),
    ).rejects.toThrow(/Could not resolve "fs".*for-of/);
  });

  it('fails when esbuild succeeds but the output requires a computed module', async () => {
    const failing = bundle(
      'declare const require: (m: string) => unknown;\nexport function handler(event: { uri: string }) {\n  return require(event.uri);\n}\n',
    );
    await expect(failing).rejects.toThrow(FunctionBundleError);
    await expect(failing).rejects.toThrow(/a reference to require .* that is not a require\("module"\) call/);
  });

  it('fails when the entry exports no handler', async () => {
    await expect(bundle('export function main() { return 1; }\n')).rejects.toThrow(
      /must end with the export of handler/,
    );
  });
});
