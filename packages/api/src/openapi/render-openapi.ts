/**
 * The API's OpenAPI 3.1 document, generated from the same zod contracts the server validates with (request
 * schemas in their input form — defaults optional —, responses in their output form). Written to
 * docs/openapi.json by `npm run schemas`; a test fails when the committed file is stale.
 */
import { z } from 'zod';
import { EpisodeResultSchema, GroupEventSchema } from '@rollout-fleet/shared';
import { ApiErrorSchema, ProblemSchema } from '../contracts/common.js';
import {
  CancelResponseSchema,
  InputFileSchema,
  RetryResponseSchema,
  RunStatusSchema,
  SubmitOptionsSchema,
  SubmitRequestSchema,
  SubmitResponseSchema,
} from '../contracts/run-contracts.js';
import {
  FileContentSchema,
  FileWriteSchema,
  InstallToolsSchema,
  SessionCreateSchema,
  SessionRunResultSchema,
  SessionRunSchema,
  SessionSchema,
} from '../contracts/session-contracts.js';
import { GroupLineSchema, ResultLineSchema, StreamEndSchema } from '../contracts/stream-contracts.js';

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

function components(entries: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(entries)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, Json>;
  };
  return Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _s, $id: _i, ...schema }]) => [id, schema]));
}

function json(schema: Json, description: string): Json {
  return { description, content: { 'application/json': { schema } } };
}

/** Every route may answer 401 and 403 (auth); `statuses` are the others it documents. */
function errors(...statuses: number[]): Record<string, Json> {
  return Object.fromEntries(
    [401, 403, ...statuses].map((status) => [String(status), { $ref: `#/components/responses/E${status}` }]),
  );
}

function errorResponses(): Record<string, Json> {
  const meaning: Record<number, string> = {
    400: 'Bad request (INPUT_INVALID for a malformed query).',
    401: 'API_UNAUTHORIZED: no or wrong bearer token.',
    403: 'API_FORBIDDEN: a non-loopback Host on a server without a token, or a cross-site write.',
    404: 'Not found (RUN_NOT_FOUND with did_you_mean, SESSION_NOT_FOUND).',
    409: 'RUN_CANCELLED: the run was cancelled; submit with resume: true to run it again (or use another run id).',
    410: 'SESSION_CLOSED (the session ended: the message says why) or SANDBOX_DEAD (the call found the sandbox gone).',
    413: 'INPUT_TOO_LARGE: the body is over RF_API_MAX_BODY_MB.',
    422: 'INPUT_INVALID / INPUT_DUPLICATE / INPUT_TOO_LARGE with every located problem; nothing was enqueued. For a session: SANDBOX_IMAGE_UNAVAILABLE (the image is missing or cannot start).',
    502: 'The sandbox or platform failed (code says which); the session stays usable.',
    503: 'Redis unreachable, or no sandbox within wait_s (SANDBOX_ACQUIRE_TIMEOUT); see Retry-After.',
  };
  return Object.fromEntries(
    Object.entries(meaning).map(([status, description]) => [`E${status}`, json(ref('Error'), description)]),
  );
}

const RUN_ID: Json = {
  name: 'run_id',
  in: 'path',
  required: true,
  description: 'The run id (percent-encode a `/` in it as %2F).',
  schema: { type: 'string' },
};
const SESSION_ID: Json = { name: 'session_id', in: 'path', required: true, schema: { type: 'string' } };

function streamOperation(kind: 'results' | 'groups', line: string, summary: string): Json {
  return {
    get: {
      operationId: kind === 'results' ? 'streamResults' : 'streamGroups',
      summary,
      description:
        'NDJSON (default): one JSON object per line — items `{"cursor", "' +
        (kind === 'results' ? 'result' : 'group') +
        '"}`, blank keep-alive lines while following, ' +
        'and a last `{"end": {"reason", "cursor"}}` line when the stream ends by itself. A stream cut off without its `end` line was dropped: ask again with ' +
        '`after=<last cursor>`; nothing is missed or repeated. `Accept: text/event-stream` (or `format=sse`) gives Server-Sent Events: `id:` = cursor, ' +
        '`event:` = ' +
        (kind === 'results' ? '`result`' : '`group`') +
        ' / `end`; `Last-Event-ID` resumes like `after`.',
      parameters: [
        RUN_ID,
        {
          name: 'after',
          in: 'query',
          description: 'Resume after this cursor (`0` = from the start).',
          schema: { type: 'string', pattern: '^(0|\\d+-\\d+)$' },
        },
        {
          name: 'follow',
          in: 'query',
          description: 'Keep the stream open for what completes next, until the run is finished or cancelled.',
          schema: { type: 'boolean', default: false },
        },
        {
          name: 'format',
          in: 'query',
          description: 'Override content negotiation.',
          schema: { type: 'string', enum: ['ndjson', 'sse'] },
        },
        {
          name: 'Last-Event-ID',
          in: 'header',
          description: 'SSE reconnection: same as `after`.',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': {
          description: 'The stream.',
          content: {
            'application/x-ndjson': { schema: { oneOf: [ref(line), ref('StreamEnd')] } },
            'text/event-stream': { schema: { type: 'string' } },
          },
        },
        ...errors(400, 404),
      },
    },
  };
}

function submitQueryParameters(): Json[] {
  const schema = z.toJSONSchema(SubmitOptionsSchema, { io: 'input' }) as {
    properties: Record<string, Json>;
    required?: string[];
  };
  return Object.entries(schema.properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: 'query',
      required: (schema.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

export function renderOpenApi(): Json {
  const requests = components(
    {
      SubmitRequest: SubmitRequestSchema,
      InputFile: InputFileSchema,
      SessionCreate: SessionCreateSchema,
      SessionRun: SessionRunSchema,
      InstallTools: InstallToolsSchema,
      FileWrite: FileWriteSchema,
    },
    'input',
  );
  const responses = components(
    {
      Error: ApiErrorSchema,
      Problem: ProblemSchema,
      SubmitResponse: SubmitResponseSchema,
      RunStatus: RunStatusSchema,
      CancelResponse: CancelResponseSchema,
      RetryResponse: RetryResponseSchema,
      EpisodeResult: EpisodeResultSchema,
      GroupEvent: GroupEventSchema,
      ResultLine: ResultLineSchema,
      GroupLine: GroupLineSchema,
      StreamEnd: StreamEndSchema,
      Session: SessionSchema,
      SessionRunResult: SessionRunResultSchema,
      FileContent: FileContentSchema,
    },
    'output',
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'rollout-fleet API',
      version: '1',
      description:
        "Trainer interop for rollout-fleet: submit runs, follow their results and RL groups, and drive remote sandbox sessions (the seed's AgentEnv over HTTP). " +
        'Every route needs `Authorization: Bearer <RF_API_TOKEN>` when the server has a token; a server without one listens on loopback only and answers only to a loopback Host. ' +
        'Errors are JSON `{"error": {code, class, retryable, message, hint, problems?, did_you_mean?}}` with the stable codes of the project\'s one error table.',
    },
    servers: [{ url: 'http://127.0.0.1:8788', description: '`rollout-fleet api` (default port)' }],
    security: [{ bearer: [] }, {}],
    paths: {
      '/v1/runs': {
        post: {
          operationId: 'submitRun',
          summary: 'Validate and enqueue a run (idempotent)',
          description:
            'Everything is validated first; on any problem nothing is enqueued and the answer lists every problem with its file, line or JSON path, and field. ' +
            'Submitting the same run again enqueues only what is missing (`force` re-runs what has a result). A JSONL body (Content-Type application/x-ndjson) ' +
            'takes the options as query parameters; problems then cite it as `request.jsonl:<line>`.',
          parameters: submitQueryParameters().map((p) => ({
            ...p,
            required: false,
            description: `JSONL body only. ${String(p.description ?? '')}`.trim(),
          })),
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: ref('SubmitRequest') },
              'application/x-ndjson': {
                schema: { type: 'string', description: 'Native episodes, one JSON object per line.' },
              },
            },
          },
          responses: {
            '200': json(ref('SubmitResponse'), 'Validated (and, unless dry_run, enqueued).'),
            ...errors(409, 413, 422),
          },
        },
      },
      '/v1/runs/{run_id}': {
        get: {
          operationId: 'getRun',
          summary: 'Run status: counts, resolved rate, throughput, ETA, groups',
          parameters: [RUN_ID],
          responses: { '200': json(ref('RunStatus'), 'The run.'), ...errors(404) },
        },
      },
      '/v1/runs/{run_id}/cancel': {
        post: {
          operationId: 'cancelRun',
          summary: 'Cancel a run: waiting jobs removed, running ones stopped',
          parameters: [RUN_ID],
          responses: { '200': json(ref('CancelResponse'), 'Cancelled.'), ...errors(404) },
        },
      },
      '/v1/runs/{run_id}/retry': {
        post: {
          operationId: 'retryRun',
          summary: 'Run the failed episodes of a run again',
          parameters: [RUN_ID],
          responses: { '200': json(ref('RetryResponse'), 'Re-enqueued.'), ...errors(404) },
        },
      },
      '/v1/runs/{run_id}/results': streamOperation(
        'results',
        'ResultLine',
        'Stream results in completion order (resumable)',
      ),
      '/v1/runs/{run_id}/groups': streamOperation(
        'groups',
        'GroupLine',
        'Stream completed RL groups, each once (resumable)',
      ),
      '/v1/sessions': {
        post: {
          operationId: 'createSession',
          summary: "Start a session: a sandbox from the fleet's supply, tools installed",
          requestBody: { required: true, content: { 'application/json': { schema: ref('SessionCreate') } } },
          responses: { '201': json(ref('Session'), 'Started.'), ...errors(422, 502, 503) },
        },
        get: {
          operationId: 'listSessions',
          summary: "This server's live sessions",
          responses: {
            '200': json(
              {
                type: 'object',
                properties: { sessions: { type: 'array', items: ref('Session') } },
                required: ['sessions'],
              },
              'The sessions.',
            ),
            ...errors(),
          },
        },
      },
      '/v1/sessions/{session_id}': {
        get: {
          operationId: 'getSession',
          summary: 'A session',
          parameters: [SESSION_ID],
          responses: { '200': json(ref('Session'), 'The session.'), ...errors(404, 410) },
        },
        delete: {
          operationId: 'closeSession',
          summary: 'End a session (its sandbox is killed)',
          parameters: [SESSION_ID],
          responses: { '204': { description: 'Ended.' }, ...errors(404, 410) },
        },
      },
      '/v1/sessions/{session_id}/run': {
        post: {
          operationId: 'runInSession',
          summary: 'Run a command or a tool call (one at a time per session, in order)',
          parameters: [SESSION_ID],
          requestBody: { required: true, content: { 'application/json': { schema: ref('SessionRun') } } },
          responses: {
            '200': json(
              ref('SessionRunResult'),
              'Ran (a timeout, a malformed call or a syntax error is an observation, not an error).',
            ),
            ...errors(404, 410, 422, 502),
          },
        },
      },
      '/v1/sessions/{session_id}/tools': {
        post: {
          operationId: 'installTools',
          summary: 'Install tools in the session (upload, make executable, put on PATH)',
          parameters: [SESSION_ID],
          requestBody: { required: true, content: { 'application/json': { schema: ref('InstallTools') } } },
          responses: { '200': json(ref('Session'), 'Installed.'), ...errors(404, 410, 422, 502) },
        },
      },
      '/v1/sessions/{session_id}/files': {
        put: {
          operationId: 'writeFile',
          summary: 'Write a file in the sandbox',
          parameters: [SESSION_ID],
          requestBody: { required: true, content: { 'application/json': { schema: ref('FileWrite') } } },
          responses: { '204': { description: 'Written.' }, ...errors(404, 410, 422, 502) },
        },
        get: {
          operationId: 'readFile',
          summary: 'Read a file from the sandbox',
          parameters: [
            SESSION_ID,
            { name: 'path', in: 'query', required: true, description: 'Absolute path.', schema: { type: 'string' } },
          ],
          responses: { '200': json(ref('FileContent'), 'The file.'), ...errors(404, 410, 422, 502) },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'RF_API_TOKEN' } },
      responses: errorResponses(),
      schemas: { ...requests, ...responses },
    },
  };
}

/** docs/openapi.json's text: two-space JSON with a trailing newline. */
export function renderOpenApiText(): string {
  return `${JSON.stringify(renderOpenApi(), null, 2)}\n`;
}
