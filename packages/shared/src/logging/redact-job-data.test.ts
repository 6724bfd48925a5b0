import { describe, expect, it } from 'vitest';
import { REDACTED } from './redact.js';
import { jobSecrets, redactJobData, redactJobText } from './redact-job-data.js';

const SECRET = 'sk-live-0123456789abcdef';
const data = {
  episode: {
    run_id: 'r',
    episode_id: 'e',
    sandbox: {
      image: 'python:3.11',
      command: 'python3 -m swerex.server --auth-token tok-abcdef123',
      env: { OPENAI_API_KEY: SECRET, DEBUG: '1' },
    },
    trajectory: [{ name: 'execute_bash', arguments: { command: `export OPENAI_API_KEY=${SECRET} && pytest` } }],
    policy: { base_url: 'http://model', api_key: 'pk-policy-987654', headers: { Authorization: 'Bearer abc.def.ghi' } },
    metadata: { source: 'episodes.jsonl:1' },
  },
  enqueued_at: '2026-01-01T00:00:00.000Z',
  attempts: [{ attempt: 1, error: `sandbox said ${SECRET}` }],
};

describe('redactJobData', () => {
  it('redacts env values (keeping the names), secret-named fields, auth tokens, and those values anywhere else', () => {
    const shown = redactJobData(data);
    expect(shown.episode.sandbox.env).toEqual({ OPENAI_API_KEY: REDACTED, DEBUG: REDACTED });
    expect(shown.episode.sandbox.command).toBe(`python3 -m swerex.server --auth-token ${REDACTED}`);
    expect(shown.episode.trajectory[0]!.arguments.command).toBe(`export OPENAI_API_KEY=${REDACTED} && pytest`);
    expect(shown.episode.policy).toEqual({
      base_url: 'http://model',
      api_key: REDACTED,
      headers: { Authorization: REDACTED },
    });
    expect(shown.attempts[0]!.error).toBe(`sandbox said ${REDACTED}`);
    // Everything else is as it was, and the input is untouched.
    expect(shown.episode.metadata).toBe(data.episode.metadata);
    expect(shown.enqueued_at).toBe(data.enqueued_at);
    expect(data.episode.sandbox.env.OPENAI_API_KEY).toBe(SECRET);
    const text = JSON.stringify(shown);
    for (const secret of [SECRET, 'tok-abcdef123', 'pk-policy-987654', 'abc.def.ghi'])
      expect(text).not.toContain(secret);
  });

  it("scrubs free text of the job's secret values, but not short values that would shred the text", () => {
    const secrets = jobSecrets(data);
    expect(secrets).toEqual(
      expect.arrayContaining([SECRET, '1', 'tok-abcdef123', 'pk-policy-987654', 'Bearer abc.def.ghi']),
    );
    expect(redactJobText(`step 1/3 echo ${SECRET} exit=1`, secrets)).toBe(`step 1/3 echo ${REDACTED} exit=1`);
    expect(redactJobText('step 1/3 exit=1 took 1.01s', secrets)).toBe('step 1/3 exit=1 took 1.01s');
    // With another object as context (a return value does not hold the env itself).
    expect(redactJobData({ note: `got ${SECRET}` }, data)).toEqual({ note: `got ${REDACTED}` });
  });

  it('finds env maps at any depth and copes with deep or odd values', () => {
    let deep: unknown = { env: { A: 'deep-secret-value' } };
    for (let i = 0; i < 150; i += 1) deep = { next: deep };
    expect(JSON.stringify(redactJobData(deep))).not.toContain('deep-secret-value');
    expect(redactJobData(null)).toBeNull();
    expect(redactJobData('plain')).toBe('plain');
    expect(redactJobData({ env: 'not-a-map' })).toEqual({ env: 'not-a-map' });
  });
});
