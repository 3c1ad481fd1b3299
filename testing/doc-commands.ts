/**
 * The commands the repository's Markdown tells a reader to type, read the way a shell would: every fenced
 * block that is shell (no language, or sh, bash, shell, console, zsh), line by line (a `\` at the end joins the
 * next line), `#` comments dropped, split at `&&`, `||`, `;` and `|`, redirections and `NAME=value` prefixes
 * taken apart. A `catalog …`, `npx catalog …`, `node bin/catalog.js …` or `npm start [-- …]` command is kept,
 * with the shell's assignments (`export NAME=value`, `NAME=value`) around it, and so is a command of the CDK CLI
 * (`npm run cdk -- …`, `npm run synth [-- …]`); anything else (aws, curl) is left to its own tools.
 *
 * A command may be written as a synopsis: `[…]` is an optional part and `a | b` inside it a choice
 * (`catalog keys issue --partner P [--expires WHEN]`); each is run both ways. A `|` outside brackets is a pipe,
 * and a pipe into a flag is refused: it is a synopsis written wrong. Placeholders (`P`, `ID`, `…`, `$VARIABLE`)
 * are left as they are written: testing/doc-world.ts gives them values. Pure; test support only.
 */

/** A piece of a shell word: literal text, a variable, or a command substitution `$(…)`. */
export type Part =
  | { readonly kind: 'text'; readonly text: string; readonly quoted: boolean }
  | { readonly kind: 'var'; readonly name: string; readonly quoted: boolean }
  | { readonly kind: 'subst'; readonly command: string; readonly quoted: boolean };

/** One shell word, as written. */
export interface Word {
  readonly parts: readonly Part[];
}

/** A `NAME=value` the shell keeps (`export`ed: also in the environment of the commands that follow). */
export interface Assignment {
  readonly name: string;
  readonly value: Word;
  readonly exported: boolean;
}

/** One `catalog` command of a document. */
export interface DocCommand {
  /** The document, relative to the repository root. */
  readonly file: string;
  /** The line it starts on (1-based). */
  readonly line: number;
  /** The command as written (continuation lines joined). */
  readonly text: string;
  /** `NAME=value` words in front of the command: its own environment. */
  readonly env: readonly Assignment[];
  /** Each way of running it: the words after `catalog` (one, or several for a synopsis). */
  readonly variants: readonly (readonly Word[])[];
  /** A file its standard output goes to (`> FILE`). */
  readonly stdoutTo?: string;
  /**
   * The Secrets Manager secret its standard output goes to, piped into `aws secretsmanager create-secret --name
   * NAME` (or `put-secret-value --secret-id NAME`): a later `$(aws secretsmanager get-secret-value --secret-id
   * NAME …)` reads it.
   */
  readonly stdoutToSecret?: Word;
}

/** One command of the CDK CLI in a document: `npm run cdk -- ARGS`, or `npm run synth [-- ARGS]`. */
export interface CdkCommand {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  /** `NAME=value` words in front of the command. */
  readonly env: readonly Assignment[];
  /** The package.json script it runs. */
  readonly script: 'cdk' | 'synth';
  /** The words after `--`, as written (none for a bare `npm run synth`). */
  readonly args: readonly Word[];
}

/** What a document does in its shell, in order: assignments, the `catalog` commands and the CDK CLI's. */
export type DocStep =
  | { readonly kind: 'assign'; readonly assignment: Assignment; readonly file: string; readonly line: number }
  | { readonly kind: 'command'; readonly command: DocCommand }
  | { readonly kind: 'cdk'; readonly command: CdkCommand };

/** A document a reader cannot follow as written (a line the shell cannot read, a pipe into a flag). */
export class DocSyntaxError extends Error {
  override name = 'DocSyntaxError';
}

const SHELL_LANGUAGES = new Set(['', 'sh', 'bash', 'shell', 'console', 'zsh']);

/** The text of a word when it is plain literal text (no variable, no substitution), else undefined. */
export function literalOf(word: Word): string | undefined {
  if (!word.parts.every((part) => part.kind === 'text')) return undefined;
  return word.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('');
}

/** A word holding one piece of literal text. */
export function textWord(text: string): Word {
  return { parts: [{ kind: 'text', text, quoted: false }] };
}

type Token =
  | { readonly kind: 'word'; readonly word: Word }
  | { readonly kind: 'op'; readonly op: '&&' | '||' | ';' | '|' | '&' }
  | { readonly kind: 'redirect'; readonly fd: number; readonly op: string; readonly dup: boolean }
  | { readonly kind: 'open' }
  | { readonly kind: 'close' }
  | { readonly kind: 'alt' };

const WORD_END = /[\s;&|<>]/;

/** Splits one logical line into tokens, as a shell would (plus the synopsis's brackets). */
function tokenize(line: string, where: string): Token[] {
  const tokens: Token[] = [];
  let depth = 0;
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line[i] as string;
    if (/\s/.test(c)) {
      i += 1;
      continue;
    }
    if (c === '#') break;
    if (line.startsWith('&&', i) || line.startsWith('||', i)) {
      tokens.push({ kind: 'op', op: line.slice(i, i + 2) as '&&' | '||' });
      i += 2;
      continue;
    }
    if (c === '|') {
      tokens.push(depth > 0 ? { kind: 'alt' } : { kind: 'op', op: '|' });
      i += 1;
      continue;
    }
    if (c === ';' || c === '&') {
      tokens.push({ kind: 'op', op: c });
      i += 1;
      continue;
    }
    const redirect = /^(\d?)(>>|>|<)(&\d)?/.exec(line.slice(i));
    if (redirect) {
      tokens.push({
        kind: 'redirect',
        fd: redirect[1] ? Number(redirect[1]) : redirect[2] === '<' ? 0 : 1,
        op: redirect[2] as string,
        dup: redirect[3] !== undefined,
      });
      i += redirect[0].length;
      continue;
    }
    // A word. A synopsis's `[` opens a group where it starts a word, and `]` closes one where it ends a word.
    while (line[i] === '[') {
      tokens.push({ kind: 'open' });
      depth += 1;
      i += 1;
    }
    const parts: Part[] = [];
    let text = '';
    let quoted = false;
    const flush = () => {
      if (text !== '') parts.push({ kind: 'text', text, quoted });
      text = '';
    };
    const dollar = (inQuotes: boolean): boolean => {
      const rest = line.slice(i);
      const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(rest);
      const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(rest);
      const variable = braced ?? bare;
      if (variable) {
        flush();
        parts.push({ kind: 'var', name: variable[1] as string, quoted: inQuotes });
        i += variable[0].length;
        return true;
      }
      if (rest.startsWith('$(')) {
        let level = 0;
        let j = i + 1;
        for (; j < n; j += 1) {
          if (line[j] === '(') level += 1;
          else if (line[j] === ')') {
            level -= 1;
            if (level === 0) break;
          }
        }
        if (j >= n) throw new DocSyntaxError(`${where}: unterminated $( in ${JSON.stringify(line)}`);
        flush();
        parts.push({ kind: 'subst', command: line.slice(i + 2, j).trim(), quoted: inQuotes });
        i = j + 1;
        return true;
      }
      return false;
    };
    while (i < n && !WORD_END.test(line[i] as string)) {
      const ch = line[i] as string;
      if (ch === "'") {
        const close = line.indexOf("'", i + 1);
        if (close === -1) throw new DocSyntaxError(`${where}: unterminated ' in ${JSON.stringify(line)}`);
        flush();
        quoted = true;
        text = line.slice(i + 1, close);
        flush();
        quoted = false;
        i = close + 1;
      } else if (ch === '"') {
        flush();
        quoted = true;
        i += 1;
        while (i < n && line[i] !== '"') {
          if (line[i] === '\\' && i + 1 < n && '"\\$`'.includes(line[i + 1] as string)) {
            text += line[i + 1];
            i += 2;
          } else if (line[i] === '$' && dollar(true)) {
            // a variable or substitution inside the quotes
          } else {
            text += line[i];
            i += 1;
          }
        }
        if (i >= n) throw new DocSyntaxError(`${where}: unterminated " in ${JSON.stringify(line)}`);
        flush();
        quoted = false;
        i += 1;
      } else if (ch === '\\' && i + 1 < n) {
        text += line[i + 1];
        i += 2;
      } else if (ch === '$' && dollar(false)) {
        // a variable or substitution
      } else {
        text += ch;
        i += 1;
      }
    }
    flush();
    // Closing brackets at the end of the word (only unquoted text can carry them).
    let closes = 0;
    const last = parts[parts.length - 1];
    if (last?.kind === 'text' && !last.quoted && depth > 0) {
      let trimmed = last.text;
      while (trimmed.endsWith(']') && closes < depth) {
        trimmed = trimmed.slice(0, -1);
        closes += 1;
      }
      if (closes > 0) {
        parts.pop();
        if (trimmed !== '') parts.push({ kind: 'text', text: trimmed, quoted: false });
      }
    }
    if (parts.length > 0) tokens.push({ kind: 'word', word: { parts } });
    for (let k = 0; k < closes; k += 1) {
      tokens.push({ kind: 'close' });
      depth -= 1;
    }
  }
  if (depth !== 0) throw new DocSyntaxError(`${where}: unbalanced [ ] in ${JSON.stringify(line)}`);
  return tokens;
}

/** A synopsis: words, and optional groups of alternatives. */
type Item = { readonly word: Word } | { readonly group: readonly (readonly Item[])[] };

function parseItems(tokens: readonly Token[], where: string): Item[] {
  let at = 0;
  const sequence = (inGroup: boolean): Item[][] => {
    const alternatives: Item[][] = [[]];
    while (at < tokens.length) {
      const token = tokens[at] as Token;
      at += 1;
      if (token.kind === 'word') (alternatives[alternatives.length - 1] as Item[]).push({ word: token.word });
      else if (token.kind === 'open')
        (alternatives[alternatives.length - 1] as Item[]).push({ group: sequence(true) });
      else if (token.kind === 'alt') alternatives.push([]);
      else if (token.kind === 'close') {
        if (!inGroup) throw new DocSyntaxError(`${where}: a ] without its [`);
        return alternatives;
      } else throw new DocSyntaxError(`${where}: unexpected ${token.kind} in a synopsis`);
    }
    if (inGroup) throw new DocSyntaxError(`${where}: a [ without its ]`);
    return alternatives;
  };
  const top = sequence(false);
  if (top.length !== 1) throw new DocSyntaxError(`${where}: a | outside [ ]`);
  return top[0] as Item[];
}

/**
 * The ways to run a synopsis: with no optional part, with each choice of each optional part alone, and with
 * every optional part (each its first choice, in full). A command without optional parts has one way.
 */
export function expandSynopsis(items: readonly Item[]): Word[][] {
  const groups = items.flatMap((item, index) => ('group' in item ? [index] : []));
  const build = (choice: ReadonlyMap<number, readonly Word[]>): Word[] =>
    items.flatMap((item, index) => ('word' in item ? [item.word] : [...(choice.get(index) ?? [])]));
  const choicesOf = (index: number): Word[][] => {
    const item = items[index] as { group: readonly (readonly Item[])[] };
    return item.group.flatMap((alternative) => expandSynopsis(alternative));
  };
  const variants: Word[][] = [build(new Map())];
  for (const index of groups)
    for (const choice of choicesOf(index)) variants.push(build(new Map([[index, choice]])));
  const fullest = (index: number): Word[] => {
    const first = (items[index] as { group: readonly (readonly Item[])[] }).group[0] ?? [];
    return expandSynopsis(first).at(-1) ?? [];
  };
  variants.push(build(new Map(groups.map((index) => [index, fullest(index)] as const))));
  const seen = new Set<string>();
  return variants.filter((variant) => {
    const key = JSON.stringify(variant);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The program a segment runs, when it is the command line: the words after it. */
function catalogArgs(words: readonly Token[], where: string): Token[] | undefined {
  const literal = (index: number) => {
    const token = words[index];
    return token?.kind === 'word' ? literalOf(token.word) : undefined;
  };
  if (literal(0) === 'catalog') return words.slice(1);
  if (literal(0) === 'npx' && literal(1) === 'catalog') return words.slice(2);
  if (literal(0) === 'node' && /(^|\/)bin\/catalog\.js$/.test(literal(1) ?? '')) return words.slice(2);
  if (literal(0) === 'npm' && (literal(1) === 'start' || (literal(1) === 'run' && literal(2) === 'start'))) {
    const rest = words.slice(literal(1) === 'start' ? 2 : 3);
    if (rest.length === 0) return [{ kind: 'word', word: textWord('start') }];
    const first = rest[0];
    if (first?.kind !== 'word' || literalOf(first.word) !== '--')
      throw new DocSyntaxError(`${where}: npm start passes arguments after --: npm start -- …`);
    return [{ kind: 'word', word: textWord('start') }, ...rest.slice(1)];
  }
  return undefined;
}

/** The script and the words after `--` of `npm run cdk|synth [-- …]`, else undefined. */
function cdkArgs(
  words: readonly Token[],
  where: string,
): { script: 'cdk' | 'synth'; args: Word[] } | undefined {
  const texts = words.map((token) => (token.kind === 'word' ? literalOf(token.word) : undefined));
  if (texts[0] !== 'npm' || texts[1] !== 'run' || (texts[2] !== 'cdk' && texts[2] !== 'synth'))
    return undefined;
  const script = texts[2];
  const rest = words.slice(3);
  if (rest.length > 0 && texts[3] !== '--')
    throw new DocSyntaxError(`${where}: npm run ${script} passes arguments after --: npm run ${script} -- …`);
  const args = rest.slice(1).map((token) => {
    if (token.kind !== 'word') throw new DocSyntaxError(`${where}: a [ ] synopsis in a cdk command`);
    return token.word;
  });
  if (script === 'cdk' && args.length === 0)
    throw new DocSyntaxError(`${where}: npm run cdk with no command`);
  return { script, args };
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;

/**
 * A line that runs the command line (possibly after `NAME=value` words), or names `npx catalog` anywhere, or
 * runs the CDK CLI's script.
 */
const RUNS_CATALOG =
  /^\s*(export\s+)?(\S+=\S*\s+)*(catalog\s|node\s+\S*bin\/catalog\.js|npm\s+(run\s+)?start\b)|\bnpx\s+catalog\b|\bnpm\s+run\s+(cdk|synth)\b/;

/** A `NAME=value` word as an assignment, else undefined. */
function assignmentOf(word: Word, exported: boolean): Assignment | undefined {
  const first = word.parts[0];
  if (first?.kind !== 'text' || first.quoted) return undefined;
  const match = ASSIGNMENT.exec(first.text);
  if (!match) return undefined;
  const rest = first.text.slice(match[0].length);
  return {
    name: match[1] as string,
    value: { parts: [...(rest === '' ? [] : [{ ...first, text: rest }]), ...word.parts.slice(1)] },
    exported,
  };
}

/** The words of a segment that are words (not operators or redirections). */
const wordsOf = (tokens: readonly Token[]) =>
  tokens.flatMap((token) => (token.kind === 'word' ? [token.word] : []));

/** The word after `flag` in an `aws secretsmanager ACTION …` command, when it is one of `actions`. */
function secretOf(words: readonly Word[], actions: readonly string[], flag: string): Word | undefined {
  const texts = words.map(literalOf);
  if (texts[0] !== 'aws' || texts[1] !== 'secretsmanager' || !actions.includes(texts[2] ?? ''))
    return undefined;
  const at = texts.indexOf(flag);
  return at === -1 ? undefined : words[at + 1];
}

/**
 * The secret a command substitution reads, when it is `aws secretsmanager get-secret-value --secret-id NAME …`
 * (the name as written); else undefined.
 */
export function secretReadBy(command: string): Word | undefined {
  return secretOf(wordsOf(tokenize(command, command)), ['get-secret-value'], '--secret-id');
}

/** The steps of one logical line. */
function stepsOfLine(line: string, file: string, lineNumber: number): DocStep[] {
  const where = `${file}:${lineNumber}`;
  const tokens = tokenize(line, where);
  const segments: Token[][] = [[]];
  const pipedInto: boolean[] = [false];
  for (const token of tokens) {
    if (token.kind === 'op') {
      segments.push([]);
      pipedInto.push(token.op === '|');
    } else (segments[segments.length - 1] as Token[]).push(token);
  }
  const steps: DocStep[] = [];
  segments.forEach((segment, index) => {
    // Redirections: `> FILE` keeps the command's output for a later `$(cat FILE)`.
    let stdoutTo: string | undefined;
    const words: Token[] = [];
    for (let k = 0; k < segment.length; k += 1) {
      const token = segment[k] as Token;
      if (token.kind !== 'redirect') {
        words.push(token);
        continue;
      }
      if (token.dup) continue;
      const target = segment[k + 1];
      k += 1;
      if (target?.kind !== 'word') throw new DocSyntaxError(`${where}: a redirection without its file`);
      if (token.fd === 1 && token.op !== '<') stdoutTo = literalOf(target.word);
    }
    if (words.length === 0) return;
    const first = words[0];
    if (pipedInto[index] && first?.kind === 'word' && (literalOf(first.word) ?? '').startsWith('-'))
      throw new DocSyntaxError(
        `${where}: a pipe into ${literalOf(first.word)}: write choices inside [ ] (catalog x [--a A | --b B]) or as lines of their own`,
      );
    let at = 0;
    const exported = first?.kind === 'word' && literalOf(first.word) === 'export';
    if (exported) at = 1;
    const assignments: Assignment[] = [];
    for (; at < words.length; at += 1) {
      const token = words[at] as Token;
      const assignment = token.kind === 'word' ? assignmentOf(token.word, exported) : undefined;
      if (!assignment) break;
      assignments.push(assignment);
    }
    const rest = words.slice(at);
    if (rest.length === 0) {
      for (const assignment of assignments)
        steps.push({ kind: 'assign', assignment, file, line: lineNumber });
      return;
    }
    const cdk = cdkArgs(rest, where);
    if (cdk) {
      steps.push({
        kind: 'cdk',
        command: { file, line: lineNumber, text: line.trim(), env: assignments, ...cdk },
      });
      return;
    }
    const args = catalogArgs(rest, where);
    if (!args) return;
    const next = pipedInto[index + 1] ? wordsOf(segments[index + 1] ?? []) : [];
    const secret =
      secretOf(next, ['create-secret'], '--name') ?? secretOf(next, ['put-secret-value'], '--secret-id');
    steps.push({
      kind: 'command',
      command: {
        file,
        line: lineNumber,
        text: line.trim(),
        env: assignments,
        variants: expandSynopsis(parseItems(args, where)),
        ...(stdoutTo !== undefined ? { stdoutTo } : {}),
        ...(secret !== undefined ? { stdoutToSecret: secret } : {}),
      },
    });
  });
  return steps;
}

/** A file a documented command writes: where (as written, and from which directory), and whether a key. */
export interface FileWrite {
  readonly file: string;
  readonly line: number;
  /** The path as written (`~/key.txt`, `outputs.json`, `$HOME/x`). */
  readonly path: string;
  /** The directory the command runs in, relative to the repository root (`infra` for `npm run cdk`). */
  readonly cwd: string;
  /** Written by `catalog keys issue` or `keys rotate`: it holds a key. */
  readonly key: boolean;
}

/**
 * Every file the shell lines of a document write, whatever the program: each `> FILE` and `>> FILE` of standard
 * output or error, and each `--outputs-file FILE` (the CDK CLI's).
 */
export function fileWrites(markdown: string, file: string): FileWrite[] {
  const writes: FileWrite[] = [];
  forEachShellLine(markdown, (line, lineNumber) => {
    let tokens: Token[];
    try {
      tokens = tokenize(line, `${file}:${lineNumber}`);
    } catch {
      return;
    }
    let segment: Token[] = [];
    const flush = () => {
      // `aws … --secret-id <SourceSecretArn>` writes a placeholder the reader replaces, not a redirection.
      if (segment.some((token) => token.kind === 'redirect' && token.op === '<')) {
        segment = [];
        return;
      }
      const words = wordsOf(segment).map((word) => literalOf(word) ?? '$');
      const at = words[0] === 'npx' ? 1 : 0;
      const key =
        words[at] === 'catalog' && words[at + 1] === 'keys' && /^(issue|rotate)$/.test(words[at + 2] ?? '');
      const cwd =
        words[0] === 'npm' && words[1] === 'run' && /^(cdk|synth)$/.test(words[2] ?? '') ? 'infra' : '';
      segment.forEach((token, index) => {
        const target = segment[index + 1];
        const path =
          token.kind === 'redirect' && !token.dup && token.op !== '<' && target?.kind === 'word'
            ? target.word
            : token.kind === 'word' && literalOf(token.word) === '--outputs-file' && target?.kind === 'word'
              ? target.word
              : undefined;
        if (path === undefined) return;
        const written = path.parts
          .map((part) => (part.kind === 'text' ? part.text : part.kind === 'var' ? `$${part.name}` : '$(…)'))
          .join('');
        writes.push({ file, line: lineNumber, path: written, cwd, key });
      });
      segment = [];
    };
    for (const token of tokens) {
      if (token.kind === 'op') flush();
      else segment.push(token);
    }
    flush();
  });
  return writes;
}

/** Calls `visit` with each logical line of the document's shell blocks (continuations joined) and its number. */
function forEachShellLine(markdown: string, visit: (line: string, lineNumber: number) => void): void {
  const lines = markdown.split('\n');
  let fence: { marker: string; shell: boolean } | undefined;
  for (let i = 0; i < lines.length; i += 1) {
    const raw = lines[i] as string;
    const opening = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(raw);
    if (!fence) {
      if (opening)
        fence = {
          marker: opening[1] as string,
          shell: SHELL_LANGUAGES.has((opening[2] ?? '').toLowerCase()),
        };
      continue;
    }
    if (raw.trim().startsWith(fence.marker)) {
      fence = undefined;
      continue;
    }
    if (!fence.shell) continue;
    const start = i;
    let line = raw;
    while (line.endsWith('\\') && i + 1 < lines.length) {
      i += 1;
      line = `${line.slice(0, -1)} ${(lines[i] as string).trim()}`;
    }
    visit(line, start + 1);
  }
}

/** Every step of a Markdown document's shell blocks, in order. */
export function docSteps(markdown: string, file: string): DocStep[] {
  const steps: DocStep[] = [];
  // A logical line: a backslash at the end joins the next one.
  forEachShellLine(markdown, (line, lineNumber) => {
    try {
      steps.push(...stepsOfLine(line, file, lineNumber));
    } catch (error) {
      // A drawing or prose in an unlabelled block is not a shell line; a line that runs the command line is.
      if (RUNS_CATALOG.test(line)) throw error;
    }
  });
  return steps;
}
