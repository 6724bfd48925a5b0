/**
 * Bounded memory per step (issue #9 item 8). The reader keeps JSON valid and cuts only over-long string values
 * to head + marker + tail with their true decoded size (randomized: escapes, \u sequences, surrogate pairs,
 * multi-byte UTF-8, random chunk boundaries). Then the real client against a real HTTP server in a child
 * process streaming a 500 MB `/run_in_session` answer: the observation is the usual head + marker + tail and
 * this process's RSS stays flat while it reads.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoundedBodyCollector, BoundedJsonReader, truncationMarker } from './bounded-body.js';
import { SwerexClient } from './swerex-client.js';

function lcg(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

const ALPHABET = ['a', 'b', ' ', '\n', '\t', '"', '\\', 'é', '€', '😀', '\u0001', '\u001b[31m', '\r', 'z'];

function randomText(random: () => number, length: number): string {
  let out = '';
  while (out.length < length) out += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return out;
}

function readInChunks(
  json: string,
  max: number,
  random: () => number,
): { value: Record<string, unknown>; truncated: Record<string, unknown> } {
  const bytes = Buffer.from(json, 'utf8');
  const reader = new BoundedJsonReader(max);
  for (let i = 0; i < bytes.length;) {
    const size = 1 + Math.floor(random() * 97);
    reader.push(bytes.subarray(i, i + size));
    i += size;
  }
  const { text, truncated } = reader.finish();
  return { value: JSON.parse(text) as Record<string, unknown>, truncated };
}

describe('BoundedJsonReader', () => {
  it('keeps short strings exact and cuts long ones to head + marker + tail with their true size (randomized)', () => {
    const random = lcg(Number(process.env.RF_TEST_SEED ?? 4242));
    const max = 600;
    for (let round = 0; round < 300; round++) {
      const output = randomText(random, Math.floor(random() * 2000));
      const body = {
        output,
        exit_code: round % 7,
        failure_reason: '',
        expect_string: 'SHELLPS1PREFIX',
        session_type: 'bash',
      };
      const { value, truncated } = readInChunks(JSON.stringify(body), max, random);
      expect({ ...value, output: '' }).toEqual({ ...body, output: '' });
      const total = Buffer.byteLength(output, 'utf8');
      const kept = value['output'] as string;
      if (Buffer.byteLength(JSON.stringify(output)) - 2 <= max / 2) {
        expect(kept, `round ${round}`).toBe(output);
        expect(truncated).toEqual({});
        continue;
      }
      const info = truncated['output'] as { totalBytes: number; omittedBytes: number } | undefined;
      if (info === undefined) {
        expect(kept).toBe(output);
        continue;
      }
      expect(info.totalBytes, `round ${round}`).toBe(total);
      const marker = truncationMarker(info.totalBytes, info.omittedBytes);
      const at = kept.indexOf(marker);
      expect(at, `round ${round}`).toBeGreaterThanOrEqual(0);
      const head = kept.slice(0, at);
      const tail = kept.slice(at + marker.length);
      expect(output.startsWith(head), `round ${round}: head`).toBe(true);
      expect(output.endsWith(tail), `round ${round}: tail`).toBe(true);
      expect(Buffer.byteLength(head) + Buffer.byteLength(tail) + info.omittedBytes).toBe(total);
    }
  });

  it('the collector answers exactly as the reader, below, at and above its fast-path bound (randomized)', () => {
    const random = lcg(Number(process.env.RF_TEST_SEED ?? 77));
    const max = 400;
    let fast = 0;
    let cut = 0;
    for (let round = 0; round < 400; round++) {
      const output = randomText(random, Math.floor(random() * 500));
      const json =
        round % 10 === 9 ? `<html>${output}` : JSON.stringify({ output, exit_code: 0, session_type: 'bash' });
      const bytes = Buffer.from(json, 'utf8');
      const reader = new BoundedJsonReader(max);
      const collector = new BoundedBodyCollector(max);
      for (let i = 0; i < bytes.length;) {
        const size = 1 + Math.floor(random() * 97);
        reader.push(bytes.subarray(i, i + size));
        collector.push(bytes.subarray(i, i + size));
        i += size;
      }
      const expected = reader.finish();
      expect(collector.finish(), `round ${round}`).toEqual(expected);
      if (bytes.length <= max / 2) fast += 1;
      if (Object.keys(expected.truncated).length > 0 || expected.text.length < json.length) cut += 1;
    }
    // Both paths ran: bodies answered without a scan, and bodies the reader had to cut.
    expect(fast).toBeGreaterThan(50);
    expect(cut).toBeGreaterThan(50);
  });

  it('leaves a body that is not JSON as its first bytes and a marker', () => {
    const reader = new BoundedJsonReader(100);
    reader.push(Buffer.from('<html>' + 'x'.repeat(500)));
    const { text } = reader.finish();
    expect(text.startsWith('<html>xxx')).toBe(true);
    expect(text).toContain('[... output truncated: 506 bytes in total, 406 bytes omitted ...]');
  });
});

/** A SWE-ReX stand-in speaking the real wire protocol, in its own process, streaming a huge output. */
const SERVER = `
const http = require('node:http');
const total = Number(process.argv[1]);
const line = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(2) + '\\\\n';
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"output":"HEAD-OF-OUTPUT ');
    let sent = 0;
    const chunk = line.repeat(Math.floor((1 << 20) / line.length));
    const pump = () => {
      while (sent < total) {
        sent += chunk.length;
        if (!res.write(chunk)) return res.once('drain', pump);
      }
      res.end(' TAIL-OF-OUTPUT","exit_code":0,"failure_reason":"","expect_string":"SHELLPS1PREFIX","session_type":"bash"}');
    };
    pump();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

describe('SwerexClient reads a 500 MB answer with bounded memory', () => {
  let child: ChildProcess;
  let baseUrl: string;
  const TOTAL = 500 * 1024 * 1024;

  beforeAll(async () => {
    child = spawn(process.execPath, ['-e', SERVER, String(TOTAL)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [data] = (await once(child.stdout!, 'data')) as [Buffer];
    baseUrl = `http://127.0.0.1:${data.toString().trim()}`;
  });
  afterAll(async () => {
    if (child.exitCode === null) {
      child.kill();
      await once(child, 'exit');
    }
  });

  it('turns a 500 MB output into head + marker + tail; RSS grows by far less than the body', async () => {
    const client = new SwerexClient({ baseUrl, apiKey: '' });
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    try {
      const observation = await client.runInSession(
        { action_type: 'bash', command: 'yes', timeout: 600 },
        { retries: 0 },
      );
      peak = Math.max(peak, process.memoryUsage().rss);
      const info = observation.truncated?.['output'];
      // Decoded bytes: each line's `\\n` escape is one byte.
      expect(info?.totalBytes).toBeGreaterThan(0.95 * TOTAL);
      expect(observation.output.startsWith('HEAD-OF-OUTPUT abcdef')).toBe(true);
      expect(observation.output.endsWith('\n TAIL-OF-OUTPUT')).toBe(true);
      expect(observation.output).toContain(truncationMarker(info!.totalBytes, info!.omittedBytes));
      expect(Buffer.byteLength(observation.output)).toBeLessThan(17 * 1024 * 1024);
      expect(observation.exit_code).toBe(0);
    } finally {
      clearInterval(sampler);
    }
    // The body is 500 MB; keeping it whole would cost at least that (twice, decoded). 16 MiB kept, twice over.
    expect(peak - before).toBeLessThan(200 * 1024 * 1024);
  });
});
