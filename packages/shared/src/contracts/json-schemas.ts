/**
 * JSON Schemas of the wire contracts, generated from the zod schemas for non-TypeScript producers
 * (Python trainers validate episodes before enqueueing). Written to `schemas/` by
 * `npm run schemas`; a test fails when the committed files are stale.
 */
import { z } from 'zod';
import { EpisodeSchema } from './episode.js';
import { EpisodeResultSchema } from './result.js';

type JsonObject = Record<string, unknown>;

function withHeader(schema: JsonObject, title: string, description: string): JsonObject {
  const { $schema, ...rest } = schema;
  return { $schema, title, description, ...rest };
}

function episodeSchema(): JsonObject {
  // The INPUT form: fields with defaults are optional, exactly what a producer may send.
  const schema = z.toJSONSchema(EpisodeSchema, { io: 'input' }) as JsonObject;
  // zod cannot express its "test_command or eval_script" refinement; say it in JSON Schema terms.
  const evalSchema = (schema.properties as Record<string, JsonObject> | undefined)?.eval;
  if (evalSchema !== undefined) evalSchema.anyOf = [{ required: ['test_command'] }, { required: ['eval_script'] }];
  return withHeader(
    schema,
    'rollout-fleet episode',
    'One rollout episode as enqueued by a producer (defaults not yet applied).',
  );
}

function resultSchema(): JsonObject {
  const schema = z.toJSONSchema(EpisodeResultSchema, { io: 'output' }) as JsonObject;
  return withHeader(schema, 'rollout-fleet episode result', 'The one result written per (run, episode, sample).');
}

/** File name under `schemas/` → file text (two-space JSON, key order as declared in the zod schema, trailing newline). */
export function renderJsonSchemas(): Record<'episode.schema.json' | 'episode-result.schema.json', string> {
  const text = (schema: JsonObject): string => `${JSON.stringify(schema, null, 2)}\n`;
  return { 'episode.schema.json': text(episodeSchema()), 'episode-result.schema.json': text(resultSchema()) };
}
