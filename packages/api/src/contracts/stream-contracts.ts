/**
 * Wire contract of the result and group streams (v1). NDJSON (default): one JSON object per line —
 * `{"cursor", "result"}` / `{"cursor", "group"}` items, blank lines as keep-alives while following, and a last
 * `{"end"}` line when the stream ends by itself. A stream cut off without its `end` line was dropped: ask again
 * with `after=<last cursor>` and nothing is missed or repeated. Server-Sent Events on request
 * (`Accept: text/event-stream`): `id:` is the cursor, `event:` is `result` / `group` / `end`, `data:` the JSON;
 * `Last-Event-ID` resumes like `after`.
 */
import { z } from 'zod';
import {
  EpisodeResultSchema,
  GroupEventSchema,
  STREAM_CURSOR_HINT,
  STREAM_CURSOR_PATTERN,
} from '@rollout-fleet/shared';

export const StreamEndSchema = z.object({
  end: z.object({
    reason: z
      .enum(['finished', 'cancelled', 'caught-up'])
      .describe(
        '`finished`: every sample of the run has a result; `cancelled`: the run was cancelled; `caught-up`: without `follow`, everything so far was sent.',
      ),
    cursor: z.string().nullable().describe('The last cursor of the stream (resume after it to get what comes next).'),
  }),
});
export type StreamEnd = z.infer<typeof StreamEndSchema>['end'];

export const ResultLineSchema = z.object({
  cursor: z.string().describe('Stream id of this result; pass it as `after` to resume after it.'),
  result: EpisodeResultSchema,
});

export const GroupLineSchema = z.object({
  cursor: z.string().describe('Stream id of this group event; pass it as `after` to resume after it.'),
  group: GroupEventSchema,
});

export const StreamQuerySchema = z.strictObject({
  after: z.string().regex(STREAM_CURSOR_PATTERN, STREAM_CURSOR_HINT).optional(),
  follow: z.stringbool().default(false),
});
