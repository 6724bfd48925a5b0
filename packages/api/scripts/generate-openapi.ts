/** Writes docs/openapi.json from the API's zod contracts. Run: npm run schemas */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderOpenApiText } from '../src/openapi/render-openapi.js';

const path = fileURLToPath(new URL('../../../docs/openapi.json', import.meta.url));
const text = renderOpenApiText();
let before: string | undefined;
try {
  before = readFileSync(path, 'utf8');
} catch {
  before = undefined;
}
if (before === text) console.log('docs/openapi.json is up to date');
else {
  writeFileSync(path, text);
  console.log('docs/openapi.json written');
}
