/** Writes the configuration table into README.md between the config-table markers. Run: npx tsx packages/shared/scripts/render-config-table.ts */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfigTable, spliceConfigTable } from '../src/config/config-table.js';

const readme = fileURLToPath(new URL('../../../README.md', import.meta.url));
const before = readFileSync(readme, 'utf8');
const after = spliceConfigTable(before, renderConfigTable());
if (after === before) {
  console.log('README.md configuration table is up to date');
} else {
  writeFileSync(readme, after);
  console.log('README.md configuration table rewritten');
}
