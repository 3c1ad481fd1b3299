// The floor of `catalog build`: the same source read and JSON.parse'd, then JSON.stringify'd and written as
// three files (everything, and one per discipline, as the build does) topped up to the same total output bytes,
// with no validation, mapping or ordering. Usage: node bench/build-floor.mjs SOURCE OUTDIR TARGET_BYTES
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const [source, out, target] = process.argv.slice(2);
const rows = JSON.parse(await readFile(source, 'utf8'));
const parts = [
  JSON.stringify(rows),
  JSON.stringify(rows.filter((r) => r.discipline === 'running')),
  JSON.stringify(rows.filter((r) => r.discipline === 'strength')),
];
let bytes = parts.reduce((sum, p) => sum + Buffer.byteLength(p), 0);
// Top up with a prefix of the rows so the floor writes as many bytes as the build did.
const missing = Number(target) - bytes;
if (missing > 0) {
  const share = Math.ceil((missing / Buffer.byteLength(parts[0])) * rows.length);
  parts.push(JSON.stringify(rows.slice(0, share)));
  bytes += Buffer.byteLength(parts[3]);
}
await Promise.all(parts.map((p, i) => writeFile(join(out, `floor-${i}.json`), p)));
process.stdout.write(String(bytes));
