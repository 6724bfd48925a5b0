import { describe, expect, it } from 'vitest';
import { bwrapArgs } from './bwrap-args.js';
import { JAIL, RUNTIME_DIR, stateLayout } from './jail-layout.js';
import { describeWith } from '@rollout-fleet/shared/testing';
import { bwrapNeed } from '../testing/bwrap-need.js';
import { checkIsolation } from './check-isolation.js';

const layout = stateLayout('/tmp/state', 'sb1');
const args = (network: boolean) => bwrapArgs({ layout, network, env: { TERM: 'dumb' }, hostname: 'sb1', command: ['/usr/bin/true'] });

describe('bwrapArgs', () => {
  it('unshares every namespace, drops capabilities and dies with its parent', () => {
    const a = args(false);
    for (const flag of ['--unshare-all', '--die-with-parent', '--new-session', '--clearenv']) expect(a).toContain(flag);
    expect(a.join(' ')).toContain('--cap-drop ALL');
    expect(a).not.toContain('--share-net');
    expect(args(true)).toContain('--share-net');
  });

  it('binds only the system read-only and the sandbox state read-write', () => {
    const a = args(false);
    const rwBinds = a.flatMap((arg, i) => (arg === '--bind' ? [`${a[i + 1]}:${a[i + 2]}`] : []));
    expect(rwBinds).toEqual([`${layout.testbed}:${JAIL.testbed}`, `${layout.tmp}:${JAIL.tmp}`, `${layout.home}:${JAIL.home}`, `${layout.run}:${JAIL.run}`]);
    // The one host directory besides the system: the server's own code, read-only at /opt/swerex-local.
    expect(a.join(' ')).toContain(`--ro-bind ${RUNTIME_DIR} ${JAIL.runtime}`);
    const sources = a.flatMap((arg, i) => (arg === '--ro-bind' || arg === '--bind' ? [a[i + 1] ?? ''] : [])).filter((s) => s !== RUNTIME_DIR);
    for (const hostDir of ['/work', '/home', '/root', '/var', '/sys']) expect(sources.some((s) => s === hostDir || s.startsWith(`${hostDir}/`)), hostDir).toBe(false);
    expect(a.slice(a.indexOf('--') + 1)).toEqual(['/usr/bin/true']);
  });
});

describeWith([bwrapNeed()], 'checkIsolation', () => {
  it('reports a working bubblewrap on this machine', () => {
    expect(checkIsolation()).toMatchObject({ bwrap: true, version: expect.stringMatching(/^bubblewrap /) });
  });
});
