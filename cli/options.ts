/**
 * The command line's options, generated from the settings declared in app/settings: each setting a command
 * reads becomes a flag with its environment variable (the flag wins) and its default in `--help`; a secret
 * setting has only its variable. Parsing goes through the settings' own rules, and every failure names the
 * flag or the variable the user typed.
 */
import { type Command, Option } from 'commander';
import {
  type CommandName,
  envOf,
  flagOf,
  formatSetting,
  modeIn,
  namesIn,
  parseSettings,
  type RawValue,
  type SettingName,
  type SettingsIn,
  specFor,
} from '../app/settings/index.ts';

/** The attribute commander stores a flag's value under (`--source-relation` → `sourceRelation`). */
function attributeOf(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_m, letter: string) => letter.toUpperCase());
}

/** Adds the options of every setting `context` reads to `command`, with help texts and variables. */
export function addSettings(command: Command, context: CommandName): Command {
  const envOnly: string[] = [];
  for (const name of namesIn(context)) {
    const spec = specFor(name);
    const flag = flagOf(name);
    const env = envOf(name);
    if (flag === undefined) {
      if (env !== undefined) envOnly.push(`  ${env}  ${spec.description}`);
      continue;
    }
    const mode = modeIn(name, context);
    const valueName = spec.kind.valueName;
    const option = new Option(
      valueName === undefined ? flag : `${flag} <${valueName}>`,
      mode === 'required' ? `${spec.description} (required)` : spec.description,
    );
    if (env !== undefined) option.env(env);
    if (spec.repeatable)
      option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    if (mode === 'default' && spec.default !== undefined && valueName !== undefined) {
      const text = formatSetting(name, spec.default as never);
      if (text !== '') option.default(spec.repeatable ? undefined : text, text);
    }
    command.addOption(option);
  }
  if (envOnly.length > 0) command.addHelpText('after', `\nEnvironment:\n${envOnly.join('\n')}`);
  return command;
}

/** The raw value of a setting as the user gave it: a flag, its variable, or nothing. */
function rawValue(command: Command, name: SettingName, env: NodeJS.ProcessEnv): RawValue | undefined {
  const flag = flagOf(name);
  const variable = envOf(name);
  if (flag === undefined) {
    const value = variable === undefined ? undefined : env[variable];
    return value === undefined || value === '' ? undefined : { value, from: 'env' };
  }
  const key = attributeOf(flag);
  const source = command.getOptionValueSource(key);
  if (source === 'env' && variable !== undefined) return { value: env[variable], from: 'env' };
  if (source !== 'cli') return undefined;
  const value = command.getOptionValue(key);
  return { value: Array.isArray(value) ? value.join(',') : value, from: 'flag' };
}

/**
 * Parses the settings of `context` from a command's flags and the environment (a flag beats its variable),
 * with the declared defaults. Throws one ConfigError naming every bad or missing setting.
 */
export function parseCommand<C extends CommandName>(
  command: Command,
  context: C,
  env: NodeJS.ProcessEnv = process.env,
): SettingsIn<C> {
  return parseSettings(
    context,
    (name) => rawValue(command, name, env),
    (name) => flagOf(name) ?? envOf(name) ?? name,
  );
}

/** Whether the user gave a setting at all (a flag or its variable), and which one; undefined when neither. */
export function givenBy(command: Command, name: SettingName): 'flag' | 'env' | undefined {
  const flag = flagOf(name);
  if (flag === undefined) return envOf(name) && process.env[envOf(name) ?? ''] ? 'env' : undefined;
  const source = command.getOptionValueSource(attributeOf(flag));
  return source === 'cli' ? 'flag' : source === 'env' ? 'env' : undefined;
}
