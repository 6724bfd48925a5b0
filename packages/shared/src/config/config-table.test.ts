import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_TABLE_END, CONFIG_TABLE_START, renderConfigTable, spliceConfigTable } from './config-table.js';
import { CONFIG_VARIABLES } from './variables.js';

const README = new URL('../../../../README.md', import.meta.url);

describe('configuration table', () => {
  it('lists every variable with its default and secrecy', () => {
    const table = renderConfigTable();
    for (const variable of CONFIG_VARIABLES) expect(table).toContain(`\`${variable.name}\``);
    expect(table).toContain('| `RF_WORKER_CONCURRENCY` | `4` |  |');
    expect(table).toMatch(
      /\| `VEFAAS_SECRET_KEY`<br>or `VOLCE_SECRET_KEY`<br>or `VOLCENGINE_SECRET_KEY` \| — \| yes \|/,
    );
    expect(CONFIG_VARIABLES.filter((v) => v.secret).map((v) => v.name)).toEqual([
      'VEFAAS_ACCESS_KEY',
      'VEFAAS_SECRET_KEY',
      'VEFAAS_GATEWAY_KEY',
      'RF_DASHBOARD_PASSWORD',
      'RF_DASHBOARD_TOKEN',
      'RF_API_TOKEN',
    ]);
  });

  it('is current in README.md (regenerate: npx tsx packages/shared/scripts/render-config-table.ts)', () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme).toContain(CONFIG_TABLE_START);
    expect(spliceConfigTable(readme, renderConfigTable())).toBe(readme);
  });

  it('splices only between the markers and refuses a document without them', () => {
    const doc = `before\n${CONFIG_TABLE_START}\nold\n${CONFIG_TABLE_END}\nafter\n`;
    expect(spliceConfigTable(doc, 'new')).toBe(`before\n${CONFIG_TABLE_START}\nnew\n${CONFIG_TABLE_END}\nafter\n`);
    expect(() => spliceConfigTable('no markers', 'new')).toThrow(/markers/);
  });
});
