/** §9 items 1–4: endpoints and status shapes, X-API-Key, X-Request-ID replay, discriminators and model fields. */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RexCaller } from './rex-caller.js';
import type { SwerexConformanceTarget } from './target.js';

export function httpFacet(getTarget: () => SwerexConformanceTarget): void {
  const rex = () => new RexCaller(getTarget());

  describe('endpoints, methods and status shapes', () => {
    it('answers GET / and GET /is_alive with the reference bodies', async () => {
      expect(await rex().ok('/')).toEqual({ message: 'hello world' });
      expect(await rex().ok('/is_alive')).toEqual({ is_alive: true, message: '' });
    });

    it('answers unknown paths with 404 and wrong methods with 405', async () => {
      const missing = await rex().raw('/no_such_endpoint', {});
      expect([missing.status, missing.json]).toEqual([404, { detail: 'Not Found' }]);
      const wrongMethod = await rex().raw('/execute', undefined, { method: 'GET' });
      expect([wrongMethod.status, wrongMethod.json]).toEqual([405, { detail: 'Method Not Allowed' }]);
      const postRoot = await rex().raw('/', {});
      expect([postRoot.status, postRoot.json]).toEqual([405, { detail: 'Method Not Allowed' }]);
    });

    it('answers invalid bodies with 422 in the FastAPI/pydantic shape', async () => {
      const missing = await rex().raw('/execute', { shell: true });
      expect(missing.status).toBe(422);
      expect(missing.json).toEqual({
        detail: [{ type: 'missing', loc: ['body', 'command'], msg: 'Field required', input: { shell: true } }],
      });
      const badJson = await rex().raw('/execute', '{"command":');
      expect(badJson.status).toBe(422);
      expect((badJson.json as { detail: Array<{ type: string }> }).detail[0]?.type).toBe('json_invalid');
      const wrongType = await rex().raw('/read_file', { path: 42 });
      expect(wrongType.status).toBe(422);
      expect((wrongType.json as { detail: unknown[] }).detail[0]).toMatchObject({
        type: 'string_type',
        loc: ['body', 'path'],
        input: 42,
      });
    });

    it('requires session_type / action_type and reports union_tag_not_found', async () => {
      for (const [path, body] of [
        ['/create_session', { session: 'x' }],
        ['/close_session', { session: 'x' }],
        ['/run_in_session', { command: 'true' }],
      ] as const) {
        const reply = await rex().raw(path, body);
        expect(reply.status, path).toBe(422);
        expect((reply.json as { detail: Array<{ type: string; loc: unknown[] }> }).detail[0]).toMatchObject({
          type: 'union_tag_not_found',
          loc: ['body'],
        });
      }
    });

    it('ignores unknown request fields and answers with every model field', async () => {
      const session = `fields-${randomUUID()}`;
      expect(Object.keys(await rex().createSession(session, { unknown_field: 1 })).sort()).toEqual([
        'output',
        'session_type',
      ]);
      const observation = await rex().run(session, 'true', { surprise: true });
      expect(observation).toEqual({
        output: '',
        exit_code: 0,
        failure_reason: '',
        expect_string: 'SHELLPS1PREFIX',
        session_type: 'bash',
      });
      expect(await rex().execute('true', { extra: 'x' })).toEqual({ stdout: '', stderr: '', exit_code: 0 });
      expect(await rex().closeSession(session)).toEqual({ session_type: 'bash' });
    });
  });

  describe('X-API-Key', () => {
    it('rejects a missing key on every path, including / and /is_alive and unknown paths', async () => {
      for (const [path, body] of [
        ['/', undefined],
        ['/is_alive', undefined],
        ['/execute', { command: 'true' }],
        ['/nowhere', {}],
      ] as const) {
        const reply = await rex().raw(path, body, { apiKey: false });
        expect([401, 403], path).toContain(reply.status);
        expect(reply.json, path).toEqual({ detail: 'Not authenticated' });
        if (reply.status === 401) expect(reply.headers['www-authenticate']?.toLowerCase()).toBe('apikey');
      }
    });

    it('rejects a wrong key with 401 Invalid API Key', async () => {
      for (const path of ['/', '/is_alive']) {
        const reply = await rex().raw(path, undefined, { apiKey: `${getTarget().authToken}-wrong` });
        expect([reply.status, reply.json]).toEqual([401, { detail: 'Invalid API Key' }]);
      }
    });
  });

  describe('X-Request-ID', () => {
    it('replays the stored 200 response without executing again, whatever the path or body', async () => {
      const id = randomUUID();
      const file = `/tmp/rex-replay-${id}`;
      const script = `echo run >> ${file}; cat ${file} | wc -l`;
      const first = await rex().raw('/execute', { command: script, shell: true }, { requestId: id });
      expect(first.status).toBe(200);
      const again = await rex().raw('/execute', { command: script, shell: true }, { requestId: id });
      expect(again.text).toBe(first.text);
      const otherPath = await rex().raw('/', undefined, { requestId: id });
      expect(otherPath.text).toBe(first.text);
      expect(await rex().sh(`cat ${file} | wc -l`)).toBe('1\n');
    });

    it('keeps only the last id (single slot)', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const file = `/tmp/rex-slot-${a}`;
      const body = { command: `echo x >> ${file}`, shell: true };
      await rex().ok('/execute', body, { requestId: a });
      await rex().ok('/execute', body, { requestId: b });
      await rex().ok('/execute', body, { requestId: a });
      expect(await rex().sh(`wc -l < ${file}`)).toBe('3\n');
    });

    it('stores 404 and 422 answers too', async () => {
      const id = randomUUID();
      const notFound = await rex().raw('/missing', {}, { requestId: id });
      const replay = await rex().raw('/execute', { command: 'true' }, { requestId: id });
      expect([notFound.status, replay.status, replay.text]).toEqual([404, 404, notFound.text]);
      const id2 = randomUUID();
      const invalid = await rex().raw('/execute', {}, { requestId: id2 });
      const replay2 = await rex().raw('/execute', { command: 'true' }, { requestId: id2 });
      expect([invalid.status, replay2.status]).toEqual([422, 422]);
    });

    it('does not store 511 or authentication failures: a retry with the same id executes', async () => {
      const id = randomUUID();
      const path = `/tmp/rex-511-${id}.txt`;
      const failed = await rex().raw('/read_file', { path }, { requestId: id });
      expect(failed.status).toBe(511);
      await rex().ok('/write_file', { path, content: 'now here' });
      expect(await rex().ok('/read_file', { path }, { requestId: id })).toEqual({ content: 'now here' });

      const id2 = randomUUID();
      const denied = await rex().raw('/read_file', { path }, { requestId: id2, apiKey: 'wrong' });
      expect(denied.status).toBe(401);
      expect(await rex().ok('/read_file', { path }, { requestId: id2 })).toEqual({ content: 'now here' });
    });
  });
}
