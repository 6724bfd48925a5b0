import { describe, expect, it } from 'vitest';
import { EmulatedSwerex } from './emulated-swerex.js';

function post(path: string, body: unknown) {
  return {
    method: 'POST',
    path,
    headers: { 'x-api-key': 'tok', 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(body)),
  };
}
const runInSession = (command: string) =>
  post('/run_in_session', { command, session: 'default', timeout: 3600, action_type: 'bash' });

describe('EmulatedSwerex', () => {
  it('ends a `sleep N` wait when the instance stops, so a closed host holds no timer', async () => {
    const server = new EmulatedSwerex('tok');
    const pending = server.handle(runInSession('sleep 3600'));
    const started = Date.now();
    server.stop();
    await expect(pending).rejects.toThrow('instance is gone');
    // Settled by the stop, not by the hour-long timer.
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('still answers a short sleep on a live instance', async () => {
    const server = new EmulatedSwerex('tok');
    expect((await server.handle(post('/create_session', { session: 'default', session_type: 'bash' }))).status).toBe(
      200,
    );
    const response = await server.handle(runInSession('sleep 0.01'));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toMatchObject({ exit_code: 0 });
  });

  it('prints echo and printf output, so our set-up markers come back (session-setup.ts)', async () => {
    const server = new EmulatedSwerex('tok');
    await server.handle(post('/create_session', { session: 'default', session_type: 'bash' }));
    const response = await server.handle(
      runInSession(`export A='x' && echo hi ; printf 'RF_SETUP_%s_%s\\n' n0nce "$?"`),
    );
    expect(JSON.parse(response.body.toString())).toMatchObject({ output: 'hi\nRF_SETUP_n0nce_0\n', exit_code: 0 });
  });
});
