import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../app/paths.ts';
import { DISCIPLINES } from './disciplines.ts';

/**
 * Product files that may name a discipline: the contract, and the pages' art (a style and a drawing each). The
 * partner kit's generated files (api.ts, schema.ts) are written from the model, which takes them from here.
 */
const MAY_NAME = /^(contract\/|builder\/pages\.ts$)/;
const NOT_PRODUCT =
  /\.test\.ts$|\.generated\.ts$|\.d\.ts$|\.testing\.ts$|^partner\/(api|schema)\.ts$|^(testing|bench|fixtures)\//;

/** What names a discipline in code: its value as a string, a key or member, a query, a file or a metric. */
const naming = (d: string) => {
  const capital = d.charAt(0).toUpperCase() + d.slice(1);
  return new RegExp(
    `'${d}'|(^\\s*|[{,] )${d}: |\\.${d}\\b|discipline=${d}\\b|catalog-${d}\\.json|[Pp]lans${capital}\\b|'${d.toUpperCase()}'`,
  );
};

describe('the disciplines', () => {
  it('are named in code only by the contract (and the pages, where each looks different)', () => {
    const root = repoRoot();
    const files = execFileSync('git', ['ls-files', '*.ts'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file !== '' && !NOT_PRODUCT.test(file) && !MAY_NAME.test(file));
    const found: string[] = [];
    for (const file of files) {
      readFileSync(`${root}/${file}`, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          // Comments may say what the code does with a discipline; a run lock's `running` state is no discipline.
          if (/^\s*(\*|\/\/|\/\*)/.test(line) || /state|runLock|LOCAL_STACK|\.catalog\//.test(line)) return;
          for (const d of DISCIPLINES)
            if (naming(d).test(line)) found.push(`${file}:${index + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });
});
