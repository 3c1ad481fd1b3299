/** Reading the settings of registry.ts for any context, and naming them the way the reader typed them. */
import { ConfigError, renderSettingRefs } from '../../contract/errors.ts';
import type { KindOutput } from './kinds.ts';
import {
  type CommandName,
  type Context,
  type Mode,
  PRODUCTION_CONTEXTS,
  READS,
  type Registry,
  SETTINGS,
  type SettingName,
  type SettingSpec,
} from './registry.ts';

export { type CommandName, type Context, SETTINGS, type SettingName } from './registry.ts';

/** The parsed value of a setting. */
export type SettingValue<K extends SettingName> = KindOutput<Registry[K]['kind']>;
/** What a CDK prop of a setting may hold (text as from `cdk -c`, or a typed value as from cdk.json). */
export type SettingInput<K extends SettingName> = Registry[K]['kind'] extends { readonly input?: infer I }
  ? Exclude<I, undefined>
  : never;

/** The names in a space-separated list. */
type Words<S extends string, Found extends string = never> = S extends `${infer Head} ${infer Rest}`
  ? Words<Rest, Found | Head>
  : Found | S;

/** The settings a context reads in one mode. */
type NamesWith<C extends Context, M extends Mode> = (typeof READS)[C] extends {
  readonly [P in M]: readonly (infer S extends string)[];
}
  ? Words<S> & SettingName
  : never;

/** The settings a context reads. */
export type NamesIn<C extends Context> =
  | NamesWith<C, 'required'>
  | NamesWith<C, 'default'>
  | NamesWith<C, 'optional'>;

/** The typed settings of a context: a setting in `optional` mode may be undefined, the others never are. */
export type SettingsIn<C extends Context> = {
  readonly [K in NamesIn<C>]: K extends NamesWith<C, 'optional'>
    ? SettingValue<K> | undefined
    : SettingValue<K>;
};

/** A setting's declaration (for the command line's generated options and the docs). */
export const specFor = (name: SettingName): SettingSpec => SETTINGS[name] as SettingSpec;

/** Each context's settings and their modes, read from READS once (a name that is no setting is a bug). */
const MODES = new Map(
  Object.entries(READS).map(([context, reads]) => {
    const modes = new Map<string, Mode>();
    for (const [mode, lists] of Object.entries(reads) as [Mode, readonly string[]][])
      for (const name of lists.join(' ').split(' ')) {
        if (!(name in SETTINGS) || modes.has(name))
          throw new Error(`READS.${context}: ${name} is unknown or repeated`);
        modes.set(name, mode);
      }
    return [context as Context, modes];
  }),
);

const ENTRIES: readonly Context[] = ['lambda', 'canary', 'cdk'];

/** The `catalog` commands, in the order of READS. */
export const COMMANDS = [...MODES.keys()].filter(
  (context): context is CommandName => !ENTRIES.includes(context),
);

/** The names of the settings a context reads, in declaration order. */
export function namesIn(context: Context): SettingName[] {
  return (Object.keys(SETTINGS) as SettingName[]).filter((name) => MODES.get(context)?.has(name));
}

/** How a context treats a setting. */
export function modeIn(name: SettingName, context: Context): Mode | undefined {
  return MODES.get(context)?.get(name);
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase();

/** The flag of a setting (`--source-relation`), or undefined when it has none. */
export function flagOf(name: SettingName): string | undefined {
  const flag = specFor(name).flag;
  if (flag === false) return undefined;
  return flag ?? `--${kebab(name)}`;
}

/** The environment variable of a setting (`CATALOG_SOURCE_RELATION`), or undefined when it has none. */
export function envOf(name: SettingName): string | undefined {
  const env = specFor(name).env;
  if (env === false) return undefined;
  return env ?? `CATALOG_${snake(name)}`;
}

/** Where a raw value came from: how the message names it. */
export type ValueOrigin = 'flag' | 'env' | 'context' | 'prop' | 'default' | 'deployment' | 'file';

/** A raw value and where it came from. */
export interface RawValue {
  readonly value: unknown;
  readonly from: ValueOrigin;
}

/** The entry points, which each name a setting their own way in messages. */
export type Entry = 'cli' | 'lambda' | 'cdk';

/** How `entry` names a setting: the flag (else the variable), the variable, or the context key. */
export function settingLabel(name: string, entry: Entry): string {
  if (!(name in SETTINGS)) return name;
  const key = name as SettingName;
  const label = specFor(key).labels?.[entry];
  if (label !== undefined) return label;
  if (entry === 'cli') return flagOf(key) ?? envOf(key) ?? name;
  if (entry === 'lambda') return envOf(key) ?? name;
  return name;
}

/** A message with every setting reference rendered for `entry` (see contract/errors.ts settingRef). */
export function renderMessage(message: string, entry: Entry): string {
  return renderSettingRefs(message, (name) => settingLabel(name, entry));
}

function labelOf(name: SettingName, from: ValueOrigin): string {
  const typed = flagOf(name) ?? envOf(name) ?? name;
  if (from === 'env') return envOf(name) ?? name;
  if (from === 'context') return `context ${name}`;
  if (from === 'deployment') return `${typed} (from the deployment)`;
  if (from === 'file') return name;
  return from === 'prop' ? name : typed;
}

/** A value as a message shows it: quoted, cut to a sane length; nothing for a secret. */
function shown(name: SettingName, value: unknown): string {
  const spec = specFor(name);
  if (spec.secret || value === undefined) return '';
  if (spec.redact && typeof value !== 'string') return '';
  const raw = typeof value === 'string' && spec.redact ? spec.redact(value) : value;
  const text = JSON.stringify(raw) ?? String(raw);
  return ` ${text.length > 120 ? `${text.slice(0, 117)}...` : text}`;
}

/** The outcome of reading the settings of a context: the values that parsed, and a line per problem. */
export interface SettingsReading<C extends Context> {
  readonly values: Partial<SettingsIn<C>>;
  readonly problems: readonly string[];
}

/**
 * Reads the settings of `context` from `read(name)`: defaults, requirements, then production rules. Every problem
 * names the setting the way it was given (`--base-url "…": must be …`); `missingLabel` names one not given.
 */
export function readSettings<C extends Context>(
  context: C,
  read: (name: SettingName) => RawValue | undefined,
  missingLabel: (name: SettingName) => string,
): SettingsReading<C> {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  const production = PRODUCTION_CONTEXTS.includes(context);
  // The production rules run once every value is parsed: a rule may depend on another setting.
  const checks: { name: SettingName; label: string; raw: unknown }[] = [];
  for (const name of namesIn(context)) {
    const spec = specFor(name);
    const mode = modeIn(name, context);
    const raw = read(name);
    if (raw === undefined || raw.value === undefined) {
      if (mode === 'required') problems.push(`${missingLabel(name)}: is required`);
      else if (mode === 'default') values[name] = spec.default;
      continue;
    }
    const result = spec.kind.schema.safeParse(raw.value);
    const label = labelOf(name, raw.from);
    if (!result.success) {
      problems.push(`${label}${shown(name, raw.value)}: ${result.error.issues[0]?.message ?? 'is invalid'}`);
      continue;
    }
    values[name] = result.data;
    if (production && spec.production) checks.push({ name, label, raw: raw.value });
  }
  const settings = { ...values };
  for (const { name, label, raw } of checks) {
    const refusal = specFor(name).production?.(settings[name] as never, { context, settings });
    if (refusal === undefined) continue;
    problems.push(`${label}${shown(name, raw)}: ${refusal}`);
    delete values[name];
  }
  return { values: values as Partial<SettingsIn<C>>, problems };
}

/** {@link readSettings}, throwing one {@link ConfigError} that lists every problem. */
export function parseSettings<C extends Context>(
  context: C,
  read: (name: SettingName) => RawValue | undefined,
  missingLabel: (name: SettingName) => string,
): SettingsIn<C> {
  const { values, problems } = readSettings(context, read, missingLabel);
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  return values as SettingsIn<C>;
}

/** A setting's declared default; throws for a setting without one (a programming error). */
export function defaultOf<K extends SettingName>(name: K): SettingValue<K> {
  const value = specFor(name).default;
  if (value === undefined) throw new Error(`setting ${name} has no default`);
  return value as SettingValue<K>;
}

/** The canonical text of a parsed value (what a flag or variable would hold). */
export function formatSetting<K extends SettingName>(name: K, value: SettingValue<K>): string {
  return specFor(name).kind.format(value);
}

/** How the docs name a context: `keys issue`, `Lambda`, `Canary`, `CDK`. */
const contextLabel = (context: Context) =>
  context === 'lambda'
    ? 'Lambda'
    : context === 'canary'
      ? 'Canary'
      : context === 'cdk'
        ? 'CDK'
        : context.replace(/^(keys|cors)-/, '$1 ');

const markdownTable = (header: readonly string[], rows: readonly (readonly string[])[]) =>
  [header, header.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');

/** The generated part of docs/settings.md (`npm run docs`): what each reader reads, then each setting once. */
export function settingsTable(): string {
  const code = (text: string | undefined) => (text ? `\`${text}\`` : '');
  const reads = [...MODES].map(([context, modes]) => [
    ENTRIES.includes(context) ? contextLabel(context) : `catalog ${contextLabel(context)}`,
    ...(['required', 'default', 'optional'] as const).map((mode) =>
      namesIn(context)
        .filter((name) => modes.get(name) === mode)
        .map(code)
        .join(', '),
    ),
  ]);
  const settings = (Object.keys(SETTINGS) as SettingName[]).map((name) => {
    const spec = specFor(name);
    const shownDefault =
      spec.default === undefined ? '' : code(spec.kind.format(spec.default as never) || '(none)');
    return [
      code(name),
      code(flagOf(name)),
      code(envOf(name)),
      code(spec.output),
      shownDefault,
      COMMANDS.filter((command) => modeIn(name, command))
        .map(contextLabel)
        .join(', '),
      modeIn(name, 'lambda') ?? '',
      modeIn(name, 'canary') ?? '',
      modeIn(name, 'cdk') ?? '',
      `${spec.description.replaceAll('|', '\\|')}${spec.secret ? ' (secret: never shown)' : ''}`,
    ];
  });
  return [
    markdownTable(['reader', 'required', 'default', 'optional'], reads),
    '',
    markdownTable(
      'setting / CDK key|flag|variable|stack output|default|commands|Lambda|Canary|CDK|what'.split('|'),
      settings,
    ),
  ].join('\n');
}
