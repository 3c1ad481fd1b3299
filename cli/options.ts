/**
 * Option parsing shared by the commands: commander reads flags and their environment variables (the flag
 * wins), zod validates the result once, and every failure names the flag or variable, the value and the rule.
 */
import type { Command } from 'commander';
import type { z } from 'zod';
import { ConfigError } from '../builder/errors.ts';

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['', '0', 'false', 'no', 'off']);

/** The name a user typed: the environment variable when the value came from it, else the long flag. */
function optionLabel(command: Command, key: string): string {
  const option = command.options.find((o) => o.attributeName() === key);
  if (!option) return key;
  if (command.getOptionValueSource(key) === 'env' && option.envVar) return option.envVar;
  return option.long ?? key;
}

/**
 * Validates a command's options with `schema`. Boolean flags that have an environment variable accept
 * 1/true/yes/on and 0/false/no/off there (commander alone would treat any value, even `0`, as true).
 */
export function parseOptions<S extends z.ZodType>(
  command: Command,
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.output<S> {
  const raw: Record<string, unknown> = { ...command.opts() };
  for (const option of command.options) {
    const key = option.attributeName();
    if (!option.isBoolean() || !option.envVar || command.getOptionValueSource(key) !== 'env') continue;
    const text = (env[option.envVar] ?? '').trim().toLowerCase();
    if (TRUE.has(text)) raw[key] = true;
    else if (FALSE.has(text)) raw[key] = false;
    else
      throw new ConfigError(
        `${option.envVar} ${JSON.stringify(env[option.envVar])}: must be 1/true/yes or 0/false/no`,
      );
  }
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const reasons = result.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? '');
    const value = raw[key];
    const shown = value === undefined ? '' : ` ${JSON.stringify(value)}`;
    return `${optionLabel(command, key)}${shown}: ${issue.message}`;
  });
  throw new ConfigError(reasons.join('; '));
}
