/** Writes schemas/*.schema.json at the repository root from the zod contracts. Run: npm run schemas */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderJsonSchemas } from '../src/contracts/json-schemas.js';

const dir = fileURLToPath(new URL('../../../schemas/', import.meta.url));
mkdirSync(dir, { recursive: true });
for (const [name, text] of Object.entries(renderJsonSchemas())) {
  const path = join(dir, name);
  let before: string | undefined;
  try {
    before = readFileSync(path, 'utf8');
  } catch {
    before = undefined;
  }
  if (before === text) {
    console.log(`schemas/${name} is up to date`);
  } else {
    writeFileSync(path, text);
    console.log(`schemas/${name} written`);
  }
}
