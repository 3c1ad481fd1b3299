/**
 * A deployment's declaration (infra/README.md, "Deployments"): one committed file per deployment,
 * `infra/deployments/<name>.json`, a JSON object of settings by their names (the settings the CDK app reads,
 * app/settings/registry.ts): its `deployment` (the file's own name, which is its stack's), its `region`, its
 * `contactAddress`, and every other setting it does not leave at its default. The CDK app builds the stack from
 * that file alone (infra/config.ts); `--deployment NAME` reads its region from it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import leven from 'leven';
import { ConfigError } from '../contract/errors.ts';
import { namesIn, readSettings, type SettingName, type SettingsIn, specFor } from './settings/index.ts';

/** Where the deployment files are, relative to the checkout's root. */
export const DEPLOYMENTS_DIR = 'infra/deployments';

/** The largest deployment file read (a few hundred bytes is usual). */
const MAX_FILE_BYTES = 64 * 1024;

/** A deployment file, read and checked by the settings' rules. */
export interface DeploymentFile {
  /** The deployment's name: its stack's, and the file's. */
  readonly name: string;
  /** The file as messages name it, relative to the checkout's root (`infra/deployments/NAME.json`). */
  readonly file: string;
  /** The AWS region the deployment lives in. */
  readonly region: string;
  /** Its settings, parsed, with the declared defaults of those it does not give. */
  readonly settings: Readonly<Partial<SettingsIn<'cdk'>>>;
  /** The settings it gives. */
  readonly given: ReadonlySet<SettingName>;
  /** The values it gives, as written (a relative `kvsSeedFile` resolved): what the stack's props take. */
  readonly values: Readonly<Partial<Record<SettingName, unknown>>>;
}

/** Settings that were renamed: the old word a reader may still type, and the setting that took its place. */
const RENAMED: Readonly<Record<string, SettingName>> = { stackName: 'deployment', stackname: 'deployment' };

/**
 * The one of `names` nearest to `word` by edit distance (case aside), when it is close enough to be a slip;
 * undefined otherwise.
 */
export function nearestName(word: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = leven(word.toLowerCase(), name.toLowerCase());
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(word.length / 3))
    ? best.name
    : undefined;
}

/** The setting `word` was probably meant to be: a renamed setting's new name, or the nearest of `names`. */
export function nearestSetting(word: string, names: readonly string[]): string | undefined {
  return RENAMED[word] ?? nearestName(word, names);
}

/** What `infra/deployments/` holds: the deployments it declares, and the files whose name is no deployment's. */
export interface DeclaredDeployments {
  /** The deployments' names, sorted. */
  readonly names: readonly string[];
  /** Each `.json` file whose name breaks the rule of a deployment's name, with that rule (sorted by file). */
  readonly invalid: readonly { readonly file: string; readonly why: string }[];
}

/** The deployments the checkout at `root` declares, and the files there that cannot be one. */
export function declaredDeployments(root: string): DeclaredDeployments {
  let files: string[];
  try {
    files = readdirSync(join(root, DEPLOYMENTS_DIR)).filter((file) => file.endsWith('.json'));
  } catch {
    files = [];
  }
  const names: string[] = [];
  const invalid: { file: string; why: string }[] = [];
  for (const file of files.sort()) {
    const name = file.slice(0, -'.json'.length);
    const checked = specFor('deployment').kind.schema.safeParse(name);
    if (checked.success) names.push(name);
    else invalid.push({ file, why: checked.error.issues[0]?.message ?? 'is invalid' });
  }
  return { names, invalid };
}

/**
 * How a message lists the declared deployments: their names, then each file there whose name cannot be a
 * deployment's, named as such (it is no choice: neither `catalog` nor the CDK app can name it).
 */
export function listDeployments(root: string): string {
  const { names, invalid } = declaredDeployments(root);
  const declared =
    names.length === 0
      ? `no deployment is declared in ${DEPLOYMENTS_DIR}/`
      : `declared in ${DEPLOYMENTS_DIR}/: ${names.join(', ')}`;
  if (invalid.length === 0) return declared;
  const files = invalid.map(({ file, why }) => `${JSON.stringify(file)} is not one: its name ${why}`);
  return `${declared}; ${files.join('; ')}`;
}

/**
 * The file of deployment `name` in the checkout at `root`, read and checked ({@link readDeploymentFile}). Throws
 * a {@link ConfigError} when the checkout declares no such deployment: the one probably meant (a slip of the
 * keyboard, or of case), and the ones declared. The command line (`--deployment NAME`, app/deployment.ts) and
 * the CDK app (`-c deployment=NAME`, infra/config.ts) both call it, so both say the same; `label` is how the
 * entry point names the setting.
 */
export function declaredDeployment(root: string, name: string, label: string): DeploymentFile {
  const file = readDeploymentFile(root, name);
  if (file !== null) return file;
  const meant = nearestName(name, declaredDeployments(root).names);
  throw new ConfigError(
    `${label} ${JSON.stringify(name)}: there is no ${DEPLOYMENTS_DIR}/${name}.json${meant ? `; did you mean ${meant}?` : ''} (${listDeployments(root)}; a new deployment is a new file there)`,
  );
}

/**
 * Reads and checks the file of deployment `name` in the checkout at `root`; null when there is none. Throws one
 * {@link ConfigError} naming every problem: a key that is no setting of a deployment (with the one probably
 * meant), a bad value, a `deployment` that is not the file's name, a missing `region` or `contactAddress`. A
 * relative `kvsSeedFile` is resolved against the file's folder.
 */
export function readDeploymentFile(root: string, name: string): DeploymentFile | null {
  const file = `${DEPLOYMENTS_DIR}/${name}.json`;
  const path = join(root, file);
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > MAX_FILE_BYTES)
      throw new ConfigError(`${file}: ${size} bytes, more than a deployment file's ${MAX_FILE_BYTES}`);
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`${file}: cannot be read (${(error as Error).message})`, { cause: error });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file}: is not JSON (${(error as Error).message})`, { cause: error });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError(`${file}: must be a JSON object of settings by name`);
  const values = raw as Record<string, unknown>;
  const names: readonly string[] = namesIn('cdk');
  const problems: string[] = [];
  for (const key of Object.keys(values))
    if (!names.includes(key)) {
      const meant = nearestSetting(key, names);
      problems.push(
        `${key}: is not a setting of a deployment${meant ? ` (did you mean ${meant}?)` : ''}; the settings: infra/README.md, "Settings"`,
      );
    }
  // A setting written as null is not given: it takes its default, as one left out does.
  const given = new Set<SettingName>(
    Object.keys(values).filter((key): key is SettingName => names.includes(key) && values[key] !== null),
  );
  const reading = readSettings(
    'cdk',
    (setting) => (given.has(setting) ? { value: values[setting], from: 'file' } : undefined),
    String,
  );
  problems.push(...reading.problems);
  const settings = { ...reading.values } as Partial<SettingsIn<'cdk'>> & { kvsSeedFile?: string };
  if (settings.deployment !== undefined && settings.deployment !== name)
    problems.push(
      `deployment ${JSON.stringify(settings.deployment)}: must be the file's name, ${name} (a copied file keeps the name of the one it was copied from)`,
    );
  if (!given.has('region'))
    problems.push('region: is required (the AWS region the deployment lives in, such as us-east-1)');
  if (problems.length > 0) throw new ConfigError(`${file}: ${problems.join('; ')}`);
  const written: Partial<Record<SettingName, unknown>> = {};
  for (const setting of given) written[setting] = values[setting];
  if (settings.kvsSeedFile !== undefined && !isAbsolute(settings.kvsSeedFile)) {
    settings.kvsSeedFile = resolve(dirname(path), settings.kvsSeedFile);
    written.kvsSeedFile = settings.kvsSeedFile;
  }
  return { name, file, region: settings.region as string, settings, given, values: written };
}
