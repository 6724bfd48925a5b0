/**
 * The project's SWE-ReX conformance suite (44 checks, swerex-protocol.md §9) against ANY SWE-ReX server over
 * HTTP: the reference `swerex-remote`, the project's runtime, or a veFaaS sandbox through its gateway route.
 * Run by bench/swerex-compare.ts (which reads the verdicts), or alone:
 *   SWEREX_URL=http://127.0.0.1:8000 SWEREX_TOKEN=secret npx vitest run --config bench/swerex-compare/vitest.config.ts
 * SWEREX_HEADERS is a JSON object of extra headers (e.g. {"X-Faas-Instance-Name":"<sandbox id>"}).
 */
import { Agent } from 'undici';
import { afterAll } from 'vitest';
import { describeSwerexConformance, dispatcherTarget } from '@rollout-fleet/test-kit/swerex-conformance';

const url = new URL(process.env.SWEREX_URL ?? 'http://127.0.0.1:8000');
const token = process.env.SWEREX_TOKEN ?? '';
if (token === '')
  throw new Error('set SWEREX_TOKEN to the auth token the server was started with (the suite checks authentication)');
const headers = JSON.parse(process.env.SWEREX_HEADERS ?? '{}') as Record<string, string>;
const agent = new Agent({ headersTimeout: 120_000, bodyTimeout: 120_000 });
afterAll(() => agent.close());

const target = dispatcherTarget({
  origin: url.origin,
  pathPrefix: url.pathname.replace(/\/+$/, ''),
  dispatcher: agent,
  authToken: token,
  headers,
});
describeSwerexConformance(() => target);
