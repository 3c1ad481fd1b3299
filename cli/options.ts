/**
 * The command line's options, generated from the settings declared in app/settings: each setting a command
 * reads becomes a flag with its environment variable (the flag wins) and its default in `--help`; a secret
 * setting has only its variable. Parsing goes through the settings' own rules, and every failure names the
 * flag or the variable the user typed.
 */
import { type Command, Option } from 'commander';
import { LOCAL_FILLS } from '../app/paths.ts';
import {
  type CommandName,
  envOf,
  flagOf,
  formatSetting,
  modeIn,
  namesIn,
  parseSettings,
  type RawValue,
  readSettings,
  type SettingName,
  type SettingsIn,
  specFor,
} from '../app/settings/index.ts';

/** The attribute commander stores a flag's value under (`--source-relation` → `sourceRelation`). */
const attributeOf = (flag: string) => new Option(flag).attributeName();

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
      mode === 'required' ? `${spec.description} (${requiredText(name, context)})` : spec.description,
    );
    if (env !== undefined) option.env(env);
    if (mode === 'default' && spec.default !== undefined && valueName !== undefined) {
      const text = formatSetting(name, spec.default as never);
      if (text !== '') option.default(text, text);
    }
    command.addOption(option);
  }
  if (envOnly.length > 0) command.addHelpText('after', `\nEnvironment:\n${envOnly.join('\n')}`);
  return command;
}

/**
 * What `--help` says of a required setting: `required`, unless the command's deployment gives it (a stack
 * output) or, with no target, the local stack does (app/deployment.ts): then where it comes from.
 */
export function requiredText(name: SettingName, context: CommandName): string {
  if (modeIn('deployment', context) === undefined) return 'required';
  const output = specFor(name).output;
  const local = LOCAL_FILLS.includes(name);
  if (output === undefined && !local) return 'required';
  const from = [
    ...(output === undefined ? [] : [`given by --deployment NAME: stack output ${output}`]),
    ...(local ? ['with no target, by the local stack'] : []),
  ];
  return `${from.join('; ')}; else required`;
}

/** The environment a command reads its settings' variables from (the process's, or a test's). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The raw value of a setting as the user gave it: a flag, else its variable (in `env`), else nothing. */
function givenValue(command: Command, name: SettingName, env: Environment): RawValue | undefined {
  const flag = flagOf(name);
  if (flag !== undefined && command.getOptionValueSource(attributeOf(flag)) === 'cli') {
    const value = command.getOptionValue(attributeOf(flag));
    return { value: Array.isArray(value) ? value.join(',') : value, from: 'flag' };
  }
  // Commander applies variables from the process's environment; the command's own `env` is the one read.
  const variable = envOf(name);
  const value = variable === undefined ? undefined : env[variable];
  return value === undefined || value === '' ? undefined : { value, from: 'env' };
}

/**
 * Parses the settings of `context` from a command's flags and the environment (a flag beats its variable),
 * then its deployment (app/deployment.ts: the named stack's outputs, or the local stack when no target is
 * given), then the declared defaults. Throws one ConfigError naming every bad or missing setting.
 */
export async function parseCommand<C extends CommandName>(
  command: Command,
  context: C,
  env: Environment,
): Promise<SettingsIn<C>> {
  const given = (name: SettingName) => givenValue(command, name, env);
  const label = (name: SettingName) => flagOf(name) ?? envOf(name) ?? name;
  let fill = new Map<SettingName, string>();
  if (modeIn('deployment', context) !== undefined) {
    const first = readSettings(context, given, label);
    const values: { readonly maxAttempts?: number } = first.values;
    const { deploymentValues } = await import('../app/deployment.ts');
    fill = await deploymentValues(
      context,
      { values: first.values, given: (name) => given(name) !== undefined },
      async (region) =>
        (await import('../app/clients.ts')).createCloudFormationClient({
          region,
          maxAttempts: values.maxAttempts ?? 3,
        }),
    );
  }
  return parseSettings(
    context,
    (name) => {
      const value = fill.get(name);
      return given(name) ?? (value === undefined ? undefined : { value, from: 'deployment' });
    },
    label,
  );
}

/**
 * Adds the command `context` names under `parent` (`keys-issue`: `issue` under `keys`) with the options of its
 * settings; its action runs `run` on them, parsed by {@link parseCommand}, and the command.
 */
export function settingsCommand<C extends CommandName>(
  parent: Command,
  context: C,
  description: string,
  io: { readonly env: Environment },
  run: (settings: SettingsIn<C>, command: Command) => Promise<void>,
): Command {
  const name = parent.parent ? context.slice(parent.name().length + 1) : context;
  const command = addSettings(parent.command(name).description(description), context);
  return command.action(async () => run(await parseCommand(command, context, io.env), command));
}

/** Whether the user gave a setting at all (a flag or its variable), and which one; undefined when neither. */
export function givenBy(command: Command, name: SettingName, env: Environment): 'flag' | 'env' | undefined {
  const from = givenValue(command, name, env)?.from;
  return from === 'flag' || from === 'env' ? from : undefined;
}
