/** §9 items 10–11: /execute with subprocess.run semantics; /read_file, /write_file, /upload, /close. */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RexCaller } from './rex-caller.js';
import { multipartBody, storedZip } from './stored-zip.js';
import type { SwerexConformanceTarget } from './target.js';

export function filesFacet(getTarget: () => SwerexConformanceTarget): void {
  const rex = () => new RexCaller(getTarget());
  const scratch = () => `/tmp/rex-files-${randomUUID()}`;

  const upload = async (fields: Parameters<typeof multipartBody>[0]) => {
    const target = getTarget();
    const { body, contentType } = multipartBody(fields);
    const reply = await target.send({
      method: 'POST',
      path: '/upload',
      headers: { 'x-api-key': target.authToken, 'content-type': contentType },
      body,
    });
    return { status: reply.status, json: JSON.parse(reply.text) as unknown };
  };

  describe('/execute', () => {
    it('captures stdout, stderr and the exit code separately', async () => {
      expect(await rex().execute('echo out; echo err >&2; exit 3')).toEqual({
        stdout: 'out\n',
        stderr: 'err\n',
        exit_code: 3,
      });
    });

    it('merges stderr into stdout when asked', async () => {
      expect(await rex().execute('echo out; echo err >&2', { merge_output_streams: true })).toEqual({
        stdout: 'out\nerr\n',
        stderr: '',
        exit_code: 0,
      });
    });

    it('replaces the whole environment with env, and honours cwd', async () => {
      const result = await rex().execute('env; pwd', { env: { ONLY_THIS: '1', PATH: '/usr/bin:/bin' }, cwd: '/tmp' });
      expect(result.stdout).toContain('ONLY_THIS=1\n');
      expect(result.stdout).not.toMatch(/^HOME=/m);
      expect((result.stdout as string).endsWith('/tmp\n')).toBe(true);
    });

    it('gives the process /dev/null as stdin and reports signals as negative exit codes', async () => {
      expect(await rex().execute(['cat'])).toEqual({ stdout: '', stderr: '', exit_code: 0 });
      expect((await rex().execute('kill -9 $$')).exit_code).toBe(-9);
    });

    it('decodes undecodable output with backslash escapes', async () => {
      expect((await rex().execute("printf 'a\\377b'")).stdout).toBe('a\\xffb');
    });
  });

  describe('/read_file and /write_file', () => {
    it('writes (creating parents, overwriting) and reads back', async () => {
      const path = `${scratch()}/deep/er/file.txt`;
      expect(await rex().ok('/write_file', { path, content: 'first' })).toEqual({});
      await rex().ok('/write_file', { path, content: 'second ünïcode\n' });
      expect(await rex().ok('/read_file', { path })).toEqual({ content: 'second ünïcode\n' });
    });

    it('uses universal newlines and honours encoding and errors', async () => {
      const path = `${scratch()}.bin`;
      await rex().sh(`printf 'a\\r\\nb\\rc\\377' > ${path}`);
      expect(await rex().ok('/read_file', { path, errors: 'backslashreplace' })).toEqual({ content: 'a\nb\nc\\xff' });
      expect(await rex().ok('/read_file', { path, encoding: 'latin-1' })).toEqual({ content: 'a\nb\ncÿ' });
      const strict = await rex().fails('/read_file', { path });
      expect(strict.class_path).toBe('builtins.UnicodeDecodeError');
    });
  });

  describe('/upload', () => {
    it('moves a single file to target_path, creating parents', async () => {
      const dir = scratch();
      const reply = await upload([
        { name: 'file', value: 'payload\n', filename: 'payload.txt', contentType: 'text/plain' },
        { name: 'target_path', value: `${dir}/nested/payload.txt` },
        { name: 'unzip', value: 'false' },
      ]);
      expect(reply).toEqual({ status: 200, json: {} });
      expect(await rex().ok('/read_file', { path: `${dir}/nested/payload.txt` })).toEqual({ content: 'payload\n' });
    });

    it('puts the file inside an existing directory as temp_file_transfer', async () => {
      const dir = scratch();
      await rex().sh(`mkdir -p ${dir}`);
      expect(
        (
          await upload([
            { name: 'file', value: 'x', filename: 'x.txt' },
            { name: 'target_path', value: dir },
          ])
        ).status,
      ).toBe(200);
      expect(await rex().ok('/read_file', { path: `${dir}/temp_file_transfer` })).toEqual({ content: 'x' });
    });

    it('extracts a zip into target_path when unzip is true', async () => {
      const dir = `${scratch()}/tools`;
      const zip = storedZip({ 'bin/tool.sh': '#!/bin/sh\necho tool\n', README: 'readme\n' });
      const reply = await upload([
        { name: 'file', value: zip, filename: 'zipped_transfer.zip', contentType: 'application/zip' },
        { name: 'target_path', value: dir },
        { name: 'unzip', value: 'true' },
      ]);
      expect(reply).toEqual({ status: 200, json: {} });
      expect(await rex().sh(`cd ${dir} && find . -type f | sort && cat bin/tool.sh`)).toBe(
        './README\n./bin/tool.sh\n#!/bin/sh\necho tool\n',
      );
    });

    it('answers 422 when a required form field is missing', async () => {
      const reply = await upload([{ name: 'target_path', value: '/tmp/x' }]);
      expect(reply.status).toBe(422);
      expect(reply.json).toEqual({
        detail: [{ type: 'missing', loc: ['body', 'file'], msg: 'Field required', input: null }],
      });
    });
  });

  describe('/close', () => {
    it('closes every shell but keeps the names registered; the server keeps running', async () => {
      const session = `close-${randomUUID()}`;
      await rex().createSession(session);
      expect(await rex().ok('/close', undefined, { method: 'POST' })).toEqual({});
      const reuse = await rex().fails('/create_session', { session, session_type: 'bash' });
      expect(reuse.class_path).toBe('swerex.exceptions.SessionExistsError');
      const dead = await rex().runFails(session, 'true');
      expect([dead.class_path, dead.message]).toEqual(['builtins.RuntimeError', 'shell not initialized']);
      expect(await rex().ok('/is_alive')).toEqual({ is_alive: true, message: '' });
    });
  });
}
