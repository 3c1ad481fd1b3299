/**
 * The app's settings from CDK context (`cdk.json` "context", or `-c name=value` on the command line, which
 * wins): one context key per CDK setting of app/settings, the same name as the stack prop. Values are parsed
 * by the settings' own rules (text from `-c`, typed values from cdk.json) and every bad key is named; the
 * stack then checks the rules that tie settings together. Relative file paths are resolved against the
 * directory `cdk` runs in (`infra/`).
 */
import { isAbsolute, resolve } from 'node:path';
import {
  type NamesIn,
  namesIn,
  parseSettings,
  SETTINGS,
  type SettingInput,
  type SettingName,
} from '../app/settings/index.ts';

/** The stack props the settings give, each optional (props.ts adds CDK's own: this file needs no CDK). */
export type SettingProps = { readonly [K in NamesIn<'cdk'>]?: SettingInput<K> };

/** The stack name when the `stackName` context is not set. */
export const DEFAULT_STACK_NAME = SETTINGS.stackName.default;

/** The stack's name and props (the settings the context gives), read through `get` (`app.node.tryGetContext`). */
export function configFromContext(
  get: (key: string) => unknown,
  cwd: string = process.cwd(),
): { stackName: string; props: SettingProps } {
  const given = new Set<SettingName>();
  const parsed = parseSettings(
    'cdk',
    (name) => {
      const value = get(name);
      if (value === undefined || value === null || value === '') return undefined;
      given.add(name);
      return { value, from: 'context' };
    },
    (name) => `context ${name}`,
  );
  const props: Record<string, unknown> = {};
  for (const name of namesIn('cdk')) {
    if (!given.has(name) || name === 'stackName') continue;
    const value = parsed[name as NamesIn<'cdk'>];
    props[name] =
      name === 'kvsSeedFile' && typeof value === 'string' && !isAbsolute(value) ? resolve(cwd, value) : value;
  }
  return { stackName: parsed.stackName, props: props as SettingProps };
}
