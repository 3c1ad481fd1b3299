/**
 * `npm test`'s lint of openapi.yaml: Redocly's `lint` with telemetry and the update notice off, its output
 * passed on as it is except the boxed Node 20 deprecation banner Redocly prints on every run under Node 20
 * (the README's Node paragraph says what runs on which Node) and its celebration of a valid description
 * (`npm test`'s log holds what fails or warns). Exits with Redocly's exit code.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const redocly = fileURLToPath(new URL('../node_modules/@redocly/cli/bin/cli.js', import.meta.url));

/**
 * Drops the lines of a banner box (from a `╔` line to its `╚` line) and the blank line before it, and the
 * celebration of a valid description.
 */
function withoutBanner(text: string): string {
  const kept: string[] = [];
  let inBox = false;
  for (const line of text.split('\n')) {
    if (/^Woohoo! Your API .* valid\./.test(line)) continue;
    if (!inBox && line.trimStart().startsWith('╔')) {
      inBox = true;
      if (kept.length > 0 && kept[kept.length - 1]?.trim() === '') kept.pop();
      continue;
    }
    if (inBox) {
      if (line.trimStart().startsWith('╚')) inBox = false;
      continue;
    }
    kept.push(line);
  }
  return kept.join('\n');
}

const child = spawn(process.execPath, [redocly, 'lint', ...process.argv.slice(2)], {
  env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  stdio: ['ignore', 'inherit', 'pipe'],
});
const errors: Buffer[] = [];
child.stderr.on('data', (chunk: Buffer) => errors.push(chunk));
child.on('close', (code, signal) => {
  process.stderr.write(withoutBanner(Buffer.concat(errors).toString('utf8')));
  process.exitCode = code ?? (signal ? 1 : 0);
});
