/**
 * docs/openapi.json is the document the server's own zod contracts generate (regenerate: npm run schemas), and
 * it describes exactly the routes the server registers: no undocumented route, no documented route missing.
 */
import { readFileSync } from 'node:fs';
import type { Router } from 'express';
import { describe, expect, it } from 'vitest';
import { runRoutes } from '../routes/run-routes.js';
import { sessionRoutes } from '../routes/session-routes.js';
import { streamRoutes } from '../routes/stream-routes.js';
import { renderOpenApi, renderOpenApiText } from './render-openapi.js';

const DOC = new URL('../../../../docs/openapi.json', import.meta.url);

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

function registered(router: Router): string[] {
  return (router.stack as Layer[]).flatMap((layer) =>
    layer.route
      ? Object.keys(layer.route.methods).map((m) => `${m.toUpperCase()} ${layer.route!.path.replace(/:\w+/g, '{}')}`)
      : [],
  );
}

describe('OpenAPI document', () => {
  it('docs/openapi.json is current (regenerate: npm run schemas)', () => {
    expect(readFileSync(DOC, 'utf8')).toBe(renderOpenApiText());
  });

  it('documents exactly the routes the server registers', () => {
    // Building the routers touches none of their dependencies; only the routes are read.
    const routers = [
      runRoutes({ config: { api: { maxBodyBytes: 1 } } } as never),
      streamRoutes({} as never),
      sessionRoutes({ sessions: {} as never, maxBodyBytes: 1 }),
    ];
    const served = routers.flatMap(registered).sort();
    const doc = renderOpenApi() as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{\w+\}/g, '{}')}`))
      .sort();
    expect(documented).toEqual(served);
    expect(served).toHaveLength(14);
  });

  it('is OpenAPI 3.1 with every $ref resolvable', () => {
    const doc = renderOpenApi() as {
      openapi: string;
      components: { schemas: Record<string, unknown>; responses: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    const refs = [...renderOpenApiText().matchAll(/"\$ref": "#\/components\/(schemas|responses)\/([^"]+)"/g)];
    expect(refs.length).toBeGreaterThan(20);
    for (const [, kind, name] of refs)
      expect(doc.components[kind as 'schemas' | 'responses'], `${kind}/${name}`).toHaveProperty(name as string);
  });
});
