/**
 * The environments of the two Lambda functions, the builder's and the canary's: written by the stack and read by
 * each handler through the same settings.
 */
import { ConfigError } from '../../contract/errors.ts';
import {
  envOf,
  formatSetting,
  type NamesIn,
  namesIn,
  readSettings,
  type SettingsIn,
  type SettingValue,
} from './index.ts';

/** The functions whose settings come from their environment. */
export type FunctionContext = 'lambda' | 'canary';

/** The settings the builder Lambda reads, with their values. */
export type LambdaSettings = SettingsIn<'lambda'>;
/** The settings the canary Lambda reads, with their values. */
export type CanarySettings = SettingsIn<'canary'>;

/** Setting values for a function, as the stack has them (undefined: not set, the handler's default applies). */
export type FunctionValues<C extends FunctionContext> = {
  readonly [K in NamesIn<C>]?: SettingValue<K> | undefined;
};
/** Setting values for the builder Lambda. */
export type LambdaValues = FunctionValues<'lambda'>;

/** How messages name each function. */
const FUNCTION_NAMES: Record<FunctionContext, string> = {
  lambda: 'the builder Lambda',
  canary: 'the canary',
};

/**
 * Parses a function's environment: refuses a `CATALOG_*` variable it does not read (a typo, a CLI-only setting);
 * the builder also requires one of the source and its secret. One {@link ConfigError} names every problem.
 */
function parseEnvironment<C extends FunctionContext>(
  context: C,
  env: Readonly<Record<string, string | undefined>>,
  extra: readonly string[],
): SettingsIn<C> {
  const { values, problems } = readSettings(
    context,
    (name) => {
      const variable = envOf(name);
      const value = variable === undefined ? undefined : env[variable];
      return value === undefined ? undefined : { value, from: 'env' };
    },
    (name) => envOf(name) ?? name,
  );
  const variables = new Set(namesIn(context).map(envOf));
  const unknown = Object.keys(env)
    .filter((name) => name.startsWith('CATALOG_') && !variables.has(name))
    .sort()
    .map((name) => `${name}: is not a setting of ${FUNCTION_NAMES[context]}`);
  const all = [...problems, ...extra, ...unknown];
  if (all.length > 0) throw new ConfigError(all.join('; '));
  return values as SettingsIn<C>;
}

/** Parses the builder Lambda's environment (see {@link parseEnvironment}). */
export function parseLambdaEnvironment(env: Readonly<Record<string, string | undefined>>): LambdaSettings {
  const sources = [envOf('source'), envOf('sourceSecretArn')];
  const oneSource = sources.filter((name) => name !== undefined && env[name] !== undefined).length === 1;
  return parseEnvironment('lambda', env, oneSource ? [] : [`set exactly one of ${sources.join(' and ')}`]);
}

/** Parses the canary Lambda's environment (see {@link parseEnvironment}). */
export function parseCanaryEnvironment(env: Readonly<Record<string, string | undefined>>): CanarySettings {
  return parseEnvironment('canary', env, []);
}

/** A function's environment for the given values: each set value as its variable, in canonical text. */
export function functionEnvironment<C extends FunctionContext>(
  context: C,
  values: FunctionValues<C>,
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const name of namesIn(context)) {
    const value = values[name as NamesIn<C>];
    const variable = envOf(name);
    if (value === undefined || variable === undefined) continue;
    environment[variable] = formatSetting(name, value as never);
  }
  return environment;
}

/** The builder Lambda's environment for the given values. */
export function lambdaEnvironment(values: LambdaValues): Record<string, string> {
  return functionEnvironment('lambda', values);
}
