/** The builder Lambda's environment, written by the stack and read by the handler through the same settings. */
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

/** The settings the Lambda reads, with their values. */
export type LambdaSettings = SettingsIn<'lambda'>;

/** Setting values for the Lambda, as the stack has them (undefined: not set, the handler's default applies). */
export type LambdaValues = { readonly [K in NamesIn<'lambda'>]?: SettingValue<K> | undefined };

/**
 * Parses the Lambda's environment: refuses a `CATALOG_*` variable it does not read (a typo, a CLI-only setting),
 * requires one of the source and its secret; one {@link ConfigError} names every problem.
 */
export function parseLambdaEnvironment(env: Readonly<Record<string, string | undefined>>): LambdaSettings {
  const { values, problems } = readSettings(
    'lambda',
    (name) => {
      const variable = envOf(name);
      const value = variable === undefined ? undefined : env[variable];
      return value === undefined ? undefined : { value, from: 'env' };
    },
    (name) => envOf(name) ?? name,
  );
  const sources = [envOf('source'), envOf('sourceSecretArn')];
  const oneSource = sources.filter((name) => name !== undefined && env[name] !== undefined).length === 1;
  const variables = new Set(namesIn('lambda').map(envOf));
  const unknown = Object.keys(env)
    .filter((name) => name.startsWith('CATALOG_') && !variables.has(name))
    .sort()
    .map((name) => `${name}: is not a setting of the builder Lambda`);
  const all = [
    ...problems,
    ...(oneSource ? [] : [`set exactly one of ${sources.join(' and ')}`]),
    ...unknown,
  ];
  if (all.length > 0) throw new ConfigError(all.join('; '));
  return values as LambdaSettings;
}

/** The Lambda's environment for the given values: each set value as its variable, in canonical text. */
export function lambdaEnvironment(values: LambdaValues): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const name of namesIn('lambda')) {
    const value = values[name as NamesIn<'lambda'>];
    const variable = envOf(name);
    if (value === undefined || variable === undefined) continue;
    environment[variable] = formatSetting(name, value as never);
  }
  return environment;
}
