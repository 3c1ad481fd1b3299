/**
 * Why the AWS SDK found no credentials, where the environment can say: `AWS_PROFILE` names a profile that
 * neither of the SDK's shared files holds (the SDK itself says only "Could not load credentials from any
 * providers"). Read as the SDK finds the files: `AWS_CONFIG_FILE` and `AWS_SHARED_CREDENTIALS_FILE`, else
 * `~/.aws/config` and `~/.aws/credentials`; a profile is a `[profile NAME]` (or `[default]`) section of the
 * first, a `[NAME]` section of the second. The entry point hands in its environment.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Section headers of an INI file: `[name]`, `[profile name]`, `[sso-session name]`… */
const SECTION = /^[ \t]*\[[ \t]*([^\]\r\n]+?)[ \t]*\][ \t]*(?:[#;].*)?$/gm;

/** The profile names a shared file holds: the config file's `profile ` sections (and `default`), any of the other's. */
function profilesIn(text: string, config: boolean): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(SECTION)) {
    const section = match[1] ?? '';
    if (!config) names.add(section);
    else if (section === 'default') names.add(section);
    else if (/^profile\s+/.test(section)) names.add(section.replace(/^profile\s+/, ''));
  }
  return names;
}

/**
 * The sentence naming a profile `AWS_PROFILE` asks for that no shared file holds, or undefined (no
 * `AWS_PROFILE`, or the profile is there: the SDK's own reason stands).
 */
export async function missingProfile(
  env: Readonly<Record<string, string | undefined>>,
): Promise<string | undefined> {
  const profile = env.AWS_PROFILE;
  if (profile === undefined || profile === '') return undefined;
  const home = env.HOME || homedir();
  const files = [
    { path: env.AWS_CONFIG_FILE || join(home, '.aws', 'config'), config: true },
    { path: env.AWS_SHARED_CREDENTIALS_FILE || join(home, '.aws', 'credentials'), config: false },
  ];
  for (const file of files) {
    const text = await readFile(file.path, 'utf8').catch(() => '');
    if (profilesIn(text, file.config).has(profile)) return undefined;
  }
  return `AWS_PROFILE names the profile "${profile}", which neither ${files[0]?.path} nor ${files[1]?.path} holds (aws configure list-profiles lists those that exist)`;
}
