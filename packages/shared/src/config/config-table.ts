/** The configuration variables as a markdown table, and the splice that keeps README.md's copy current. */
import { CONFIG_VARIABLES } from './variables.js';

export const CONFIG_TABLE_START = '<!-- config-table:start -->';
export const CONFIG_TABLE_END = '<!-- config-table:end -->';

const code = (text: string): string => `\`${text}\``;

export function renderConfigTable(): string {
  const rows = CONFIG_VARIABLES.map((v) => {
    const names = [v.name, ...v.aliases].map(code).join('<br>or ');
    const fallback = v.default === undefined ? '—' : code(v.default);
    return `| ${names} | ${fallback} | ${v.secret ? 'yes' : ''} | ${v.meaning} |`;
  });
  const intro =
    'Read from the environment, over a `.env` file in the working directory (the environment wins). ' +
    'Unknown `RF_*` / `VEFAAS_*` variables are rejected. Booleans accept true/false, 1/0, yes/no. ' +
    'Secrets are never logged or echoed in errors.';
  return [intro, '', '| variable | default | secret | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** Replaces what lies between the config-table markers in `document` with `table`. */
export function spliceConfigTable(document: string, table: string): string {
  const start = document.indexOf(CONFIG_TABLE_START);
  const end = document.indexOf(CONFIG_TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`the document lacks ${CONFIG_TABLE_START} ... ${CONFIG_TABLE_END} markers`);
  return `${document.slice(0, start + CONFIG_TABLE_START.length)}\n${table}\n${document.slice(end)}`;
}
