/**
 * Bundles the CloudFront Functions into plain cloudfront-js-2.0 scripts and checks them on the syntax tree:
 * a top-level `handler`, only the runtime's syntax, modules, globals and methods, at most 10 KB (gateway/README.md).
 */
import { Parser } from 'acorn';
import { fullAncestor } from 'acorn-walk';
import { type BuildOptions, type BuildResult, build, buildSync } from 'esbuild';

/** The two functions: source entry → output file name. */
export const GATEWAY_FUNCTIONS = {
  'viewer-request': 'gateway/functions/viewer-request.ts',
  'viewer-response': 'gateway/functions/viewer-response.ts',
} as const;
export type GatewayFunctionName = keyof typeof GATEWAY_FUNCTIONS;

/** Where `npm run build` writes the bundles, relative to the repository root. */
export const GATEWAY_DIST = 'dist/gateway';

/**
 * CloudFront's limit on function code, in bytes (not adjustable), and what we aim for (room to grow): 8.5 KB,
 * since viewer-request carries the home page (about 3.8 KB: its HTML, the stylesheet it shares with the plan
 * pages, and its headers).
 */
export const FUNCTION_SIZE_LIMIT = 10 * 1024;
export const FUNCTION_SIZE_TARGET = 8.5 * 1024;

const MODULES = new Set(['crypto', 'querystring', 'buffer']);

const words = (text: string) => text.trim().split(/\s+/);

/** The runtime's module objects (`cloudfront`, what `require` gives): each member, and the object its call returns. */
export const RUNTIME_OBJECTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  cloudfront: { kvs: 'KeyValueStore', logCustomData: '' },
  KeyValueStore: { get: '', exists: '', meta: '' },
  crypto: { createHash: 'Hash', createHmac: 'Hash' },
  Hash: { update: 'Hash', digest: '' },
  querystring: { parse: '', stringify: '', escape: '', unescape: '' },
  buffer: { Buffer: '' },
};

/** What cloudfront-js-2.0 offers (AWS's "JavaScript runtime 2.0 features"), kept short on purpose. */
const RUNTIME_FEATURES = new Set([
  ...words(`Object Array String Number Boolean Math JSON Date RegExp Promise Error TypeError RangeError
    SyntaxError ReferenceError URIError parseInt parseFloat isNaN isFinite decodeURI decodeURIComponent encodeURI
    encodeURIComponent NaN Infinity undefined require console TextEncoder TextDecoder atob btoa Object.assign
    Object.create Object.defineProperty Object.entries Object.freeze Object.getOwnPropertyNames
    Object.getPrototypeOf Object.keys Object.prototype Object.values Array.isArray String.fromCharCode JSON.parse
    JSON.stringify Date.now Date.parse Date.UTC Math.abs Math.ceil Math.floor Math.max Math.min Math.pow
    Math.random Math.round Promise.all Promise.reject Promise.resolve console.log`).map(
    (name) => `global ${name}`,
  ),
  ...words(`charAt charCodeAt concat endsWith includes indexOf lastIndexOf match padStart replace replaceAll
    search slice split startsWith substring toLowerCase toUpperCase trim every filter find forEach join map pop
    push reduce reverse shift some sort splice unshift exec test toFixed toString apply bind call
    hasOwnProperty then catch`).map((name) => `method ${name}`),
  ...Object.entries(RUNTIME_OBJECTS).flatMap(([object, members]) => [
    `runtime ${object}`,
    ...Object.keys(members).map((member) => `runtime ${object}.${member}`),
  ]),
]);

/** ES5 nodes, plus what cloudfront-js-2.0 adds (let/const, arrows, templates, rest parameters, await). */
const ALLOWED = new Set(
  words(`Program ExpressionStatement BlockStatement EmptyStatement ReturnStatement LabeledStatement BreakStatement
    ContinueStatement IfStatement SwitchStatement SwitchCase ThrowStatement TryStatement CatchClause WhileStatement
    DoWhileStatement ForStatement ForInStatement FunctionDeclaration FunctionExpression ArrowFunctionExpression
    VariableDeclaration VariableDeclarator ThisExpression ArrayExpression ObjectExpression Property UnaryExpression
    UpdateExpression BinaryExpression AssignmentExpression LogicalExpression MemberExpression ConditionalExpression
    CallExpression NewExpression SequenceExpression Identifier Literal TemplateLiteral TemplateElement RestElement
    AwaitExpression ImportDeclaration ImportDefaultSpecifier`),
);

interface AnyNode {
  type: string;
  start: number;
  [key: string]: unknown;
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/**
 * What the code uses of its runtime, sorted: `global JSON.parse`, `method trim`, `runtime Hash.digest` (followed
 * through bindings and calls). A name no function declares is a global (a block's counts for its function).
 */
function usesOf(program: AnyNode): string[] {
  const scopes = new Map<AnyNode, Map<string, string>>();
  const declare = (scope: AnyNode, id: unknown, type = '') => {
    const node = id as AnyNode | null;
    if (node?.type !== 'Identifier') return;
    const names = scopes.get(scope) ?? new Map<string, string>();
    scopes.set(scope, names.set(node.name as string, type));
  };
  /** The innermost function (or the program) around the node at `ancestors[at]`, the node excluded. */
  const enclosing = (ancestors: AnyNode[], at: number) => {
    for (let i = at - 1; i >= 0; i -= 1)
      if (FUNCTIONS.has((ancestors[i] as AnyNode).type)) return ancestors[i] as AnyNode;
    return program;
  };
  /** The runtime object a name is bound to ('' for another value), undefined for a global. */
  const resolve = (name: string, ancestors: AnyNode[]) => {
    for (let i = ancestors.length - 1; i >= 0; i -= 1) {
      const type = scopes.get(ancestors[i] as AnyNode)?.get(name);
      if (type !== undefined) return type;
    }
    return undefined;
  };
  /** The runtime object an expression gives ('' when it gives none). */
  const typeOf = (node: AnyNode, ancestors: AnyNode[]): string => {
    if (node.type === 'Identifier') return resolve(node.name as string, ancestors) ?? '';
    if (node.type !== 'CallExpression') return '';
    const callee = node.callee as AnyNode;
    const args = node.arguments as AnyNode[];
    if (
      callee.type === 'Identifier' &&
      callee.name === 'require' &&
      resolve('require', ancestors) === undefined
    )
      return typeof args[0]?.value === 'string' && MODULES.has(args[0].value) ? args[0].value : '';
    if (callee.type !== 'MemberExpression' || callee.computed) return '';
    const object = typeOf(callee.object as AnyNode, ancestors);
    return RUNTIME_OBJECTS[object]?.[(callee.property as AnyNode).name as string] ?? '';
  };
  const walk = (visit: (node: AnyNode, ancestors: AnyNode[]) => void) =>
    fullAncestor(program as never, (node, _state, ancestors) =>
      visit(node as unknown as AnyNode, ancestors as unknown as AnyNode[]),
    );
  // The names each function and the program declare, then the runtime objects bound to them, then the uses.
  walk((node, ancestors) => {
    const at = ancestors.length - 1;
    if (node.type === 'VariableDeclarator' || node.type === 'CatchClause')
      declare(enclosing(ancestors, at), node.type === 'CatchClause' ? node.param : node.id);
    else if (node.type === 'ImportDefaultSpecifier') declare(program, node.local, 'cloudfront');
    else if (FUNCTIONS.has(node.type)) {
      if (node.type === 'FunctionDeclaration') declare(enclosing(ancestors, at), node.id);
      else declare(node, node.id);
      for (const param of node.params as AnyNode[])
        declare(node, param.type === 'RestElement' ? param.argument : param);
      if (node.type !== 'ArrowFunctionExpression') declare(node, { type: 'Identifier', name: 'arguments' });
    }
  });
  walk((node, ancestors) => {
    const id = node.id as AnyNode | undefined;
    if (node.type !== 'VariableDeclarator' || !node.init || id?.type !== 'Identifier') return;
    const type = typeOf(node.init as AnyNode, ancestors);
    if (type) scopes.get(enclosing(ancestors, ancestors.length - 1))?.set(id.name as string, type);
  });
  const uses = new Set<string>();
  walk((node, ancestors) => {
    const parent = ancestors[ancestors.length - 2];
    if (node.type === 'Identifier' && resolve(node.name as string, ancestors) === undefined)
      uses.add(`global ${node.name}`);
    else if (node.type === 'ImportDefaultSpecifier') uses.add('runtime cloudfront');
    else if (node.type === 'CallExpression' && (node.callee as AnyNode).type === 'Identifier') {
      const module = typeOf(node, ancestors);
      if (module) uses.add(`runtime ${module}`);
    } else if (node.type === 'MemberExpression' && !node.computed) {
      const object = node.object as AnyNode;
      const name = (node.property as AnyNode).name as string;
      const type = typeOf(object, ancestors);
      if (type) uses.add(`runtime ${type}.${name}`);
      else if (object.type === 'Identifier' && resolve(object.name as string, ancestors) === undefined)
        uses.add(`global ${object.name}.${name}`);
      else if (parent?.type === 'CallExpression' && parent.callee === node) uses.add(`method ${name}`);
    }
  });
  return [...uses].sort();
}

const parse = (code: string) =>
  Parser.parse(code, { ecmaVersion: 2022, sourceType: 'module' }) as unknown as AnyNode;

/** What a function's code uses of its runtime ({@link usesOf}: `global JSON.parse`, `runtime Hash.digest`…). */
export function functionUses(code: string): string[] {
  return usesOf(parse(code));
}

/** Every reason the code cannot run as a cloudfront-js-2.0 function (none when it can). */
export function checkFunctionCode(code: string): string[] {
  const problems: string[] = [];
  const bytes = Buffer.byteLength(code);
  if (bytes > FUNCTION_SIZE_LIMIT)
    problems.push(`${bytes} bytes is over CloudFront's ${FUNCTION_SIZE_LIMIT}-byte limit`);
  let program: AnyNode;
  try {
    program = parse(code);
  } catch (error) {
    return [...problems, `does not parse: ${(error as Error).message}`];
  }
  const at = (node: AnyNode) => `at offset ${node.start}`;
  const topLevel = new Set(program.body as AnyNode[]);
  fullAncestor(program as never, (raw, _state, ancestors) => {
    const node = raw as unknown as AnyNode;
    const parent = ancestors[ancestors.length - 2] as unknown as AnyNode | undefined;
    if (!ALLOWED.has(node.type)) {
      problems.push(`${node.type} ${at(node)} is not supported by cloudfront-js-2.0`);
      return;
    }
    switch (node.type) {
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
        if (node.generator) problems.push(`a generator ${at(node)} is not supported`);
        if (node.async && !topLevel.has(node))
          problems.push(`an async function that is not top-level ${at(node)} is not supported`);
        break;
      case 'LogicalExpression':
        if (node.operator === '??') problems.push(`?? ${at(node)} is not supported`);
        break;
      case 'AssignmentExpression':
        if (['??=', '||=', '&&='].includes(String(node.operator)))
          problems.push(`${node.operator} ${at(node)} is not supported`);
        break;
      case 'Property':
        if (node.method || node.shorthand || node.computed)
          problems.push(`a method, shorthand or computed property ${at(node)} is not supported`);
        break;
      case 'CatchClause':
        if (!node.param) problems.push(`catch without a binding ${at(node)} is not supported`);
        break;
      case 'Literal':
        if (typeof node.bigint === 'string') problems.push(`a BigInt literal ${at(node)} is not supported`);
        break;
      case 'ImportDeclaration': {
        const source = (node.source as AnyNode).value;
        const specifiers = node.specifiers as AnyNode[];
        if (
          source !== 'cloudfront' ||
          specifiers.length !== 1 ||
          specifiers[0]?.type !== 'ImportDefaultSpecifier'
        )
          problems.push(
            `import of ${JSON.stringify(source)} ${at(node)}: only "import cf from 'cloudfront'" is allowed`,
          );
        break;
      }
      case 'CallExpression': {
        const callee = node.callee as AnyNode;
        if (callee.type === 'Identifier' && callee.name === 'require') {
          const args = node.arguments as AnyNode[];
          const name = args.length === 1 && args[0]?.type === 'Literal' ? args[0].value : undefined;
          if (typeof name !== 'string' || !MODULES.has(name))
            problems.push(
              `require(${args.map((a) => JSON.stringify(a.value ?? a.type)).join(', ')}) ${at(node)}: only crypto, querystring and buffer`,
            );
        }
        break;
      }
      case 'AwaitExpression':
        if ((parent?.type === 'CallExpression' || parent?.type === 'NewExpression') && parent.callee !== raw)
          problems.push(`await inside call arguments ${at(node)} is refused by njs`);
        break;
      case 'Identifier': {
        // `require` may only be called directly with a module name; any other use (typeof require,
        // require.apply, passing it around) is how a bundler's dynamic-require shim looks.
        if (node.name !== 'require' || !parent) break;
        const isKey =
          (parent.type === 'MemberExpression' && parent.property === raw && !parent.computed) ||
          (parent.type === 'Property' && parent.key === raw && !parent.computed);
        const isDirectCall = parent.type === 'CallExpression' && parent.callee === raw;
        if (!isKey && !isDirectCall)
          problems.push(`a reference to require ${at(node)} that is not a require("module") call`);
        break;
      }
      case 'NewExpression': {
        const callee = node.callee as AnyNode;
        if (callee.type === 'Identifier' && callee.name === 'Function')
          problems.push(`the Function constructor ${at(node)} is not available`);
        break;
      }
    }
  });
  for (const use of usesOf(program))
    if (!RUNTIME_FEATURES.has(use)) problems.push(`${use} is not among what cloudfront-js-2.0 offers`);
  const handler = (program.body as AnyNode[]).some(
    (statement) =>
      statement.type === 'FunctionDeclaration' && (statement.id as AnyNode | null)?.name === 'handler',
  );
  if (!handler) problems.push('no top-level function named handler');
  return problems;
}

/** Thrown when a function bundle cannot be deployed; the message lists every reason. */
export class FunctionBundleError extends Error {
  override name = 'FunctionBundleError';
}

const IMPORT_OF_MODULE = /import\s*(\w+)\s*from\s*"(crypto|querystring|buffer)";/g;
/** The bundle's last statement: the handler's export, under whatever name the minifier gave its function. */
const EXPORT_TAIL = /export\s*\{\s*(?:([\w$]+)\s+as\s+)?handler\s*\};?\s*$/;

/** esbuild's options for a function's bundle (before {@link finishBundle} turns it into the runtime's script). */
function bundleOptions(entry: string): BuildOptions & { write: false } {
  return {
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    external: ['cloudfront', ...MODULES],
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
    // Every name is shortened, the module's top level too (it is not the script's global scope yet): the
    // 10 KB limit counts bytes. `handler` keeps its name through the wrapper below.
    minifyIdentifiers: true,
    minifyWhitespace: true,
    minifySyntax: true,
    target: 'es2017',
    // What cloudfront-js-2.0 lacks: esbuild lowers it where it can (e.g. `{ headers }` → `{ headers: headers }`)
    // and fails the build where it cannot; checkFunctionCode then verifies the result.
    supported: Object.fromEntries(
      words(`object-extensions optional-catch-binding object-rest-spread for-of class generator destructuring
        default-argument nullish-coalescing optional-chain async-generator`).map((name) => [name, false]),
    ),
  };
}

/** esbuild's failure as a {@link FunctionBundleError} naming the entry and every reason. */
function bundleFailure(entry: string, error: { errors?: { text: string }[] }): FunctionBundleError {
  const reasons = error.errors?.map((e) => e.text).join('; ') ?? String(error);
  return new FunctionBundleError(`${entry}: ${reasons}`, { cause: error });
}

/** esbuild's output as the runtime's script: a top-level `handler`, `require` for the modules, checked. */
function finishBundle(entry: string, result: BuildResult): string {
  let code = result.outputFiles?.[0]?.text ?? '';
  const tail = EXPORT_TAIL.exec(code);
  if (!tail) throw new FunctionBundleError(`${entry}: the bundle must end with the export of handler`);
  // The runtime calls a top-level `handler`: the minified function is called through one of that name.
  const renamed = tail[1];
  code = code.slice(0, tail.index) + (renamed ? `\nasync function handler(e){return ${renamed}(e)}\n` : '\n');
  code = code.replace(IMPORT_OF_MODULE, 'var $1=require("$2");');
  // The one import goes first, as in AWS's examples.
  const importOfCloudfront = /import\s*\w+\s*from\s*"cloudfront";/.exec(code);
  if (importOfCloudfront)
    code = `${importOfCloudfront[0]}\n${code.replace(importOfCloudfront[0], '').trim()}\n`;
  const problems = checkFunctionCode(code);
  if (problems.length > 0) throw new FunctionBundleError(`${entry}: ${problems.join('; ')}`);
  return code;
}

/** Bundles a module exporting `handler` into the runtime's script form; {@link FunctionBundleError} if it fails. */
export async function bundleFunction(entry: string): Promise<string> {
  const result = await build(bundleOptions(entry)).catch((error: { errors?: { text: string }[] }) => {
    throw bundleFailure(entry, error);
  });
  return finishBundle(entry, result);
}

/**
 * {@link bundleFunction}, synchronously: what a CDK stack's constructor can call, so it deploys the functions
 * of the sources it is built from, never a bundle left in dist/ by an older build.
 */
export function bundleFunctionSync(entry: string): string {
  let result: BuildResult;
  try {
    result = buildSync(bundleOptions(entry));
  } catch (error) {
    throw bundleFailure(entry, error as { errors?: { text: string }[] });
  }
  return finishBundle(entry, result);
}
