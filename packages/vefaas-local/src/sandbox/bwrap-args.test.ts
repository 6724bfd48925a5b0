import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bwrapArgs } from './bwrap-args.js';
import { JAIL, RUNTIME_DIR, stateLayout } from './jail-layout.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { checkIsolation } from './check-isolation.js';

const layout = stateLayout('/tmp/state', 'sb1');
const MB = 1024 * 1024;
const args = (network: boolean) =>
  bwrapArgs({
    layout,
    network,
    env: { TERM: 'dumb' },
    hostname: 'sb1',
    command: ['/usr/bin/true'],
    tmpfsBytes: 64 * MB,
    tmpfsPerms: true,
    imageSource: '/img/built',
  });

describe('bwrapArgs', () => {
  it('unshares every namespace, drops capabilities and dies with its parent', () => {
    const a = args(false);
    for (const flag of ['--unshare-all', '--die-with-parent', '--new-session', '--clearenv']) expect(a).toContain(flag);
    expect(a.join(' ')).toContain('--cap-drop ALL');
    expect(a).not.toContain('--share-net');
    expect(args(true)).toContain('--share-net');
  });

  it('binds only the system read-only, no host directory read-write (not even the socket), and makes every writable place a sized tmpfs', () => {
    const a = args(false);
    const rwBinds = a.flatMap((arg, i) =>
      arg === '--bind' || arg === '--dev-bind' ? [`${a[i + 1]}:${a[i + 2]}`] : [],
    );
    expect(rwBinds).toEqual([]);
    expect(a.join(' ')).not.toContain(layout.run);
    const joined = a.join(' ');
    expect(joined).toContain(`--size ${64 * MB} --tmpfs ${JAIL.testbed}`);
    expect(joined).toContain(`--size ${64 * MB} --perms 1777 --tmpfs ${JAIL.tmp}`);
    expect(joined).toContain(`--size ${64 * MB} --tmpfs ${JAIL.home}`);
    // The host directories besides the system: the server's own code and the image, both read-only.
    expect(joined).toContain(`--ro-bind ${RUNTIME_DIR} ${JAIL.runtime}`);
    expect(joined).toContain(`--ro-bind /img/built ${JAIL.image}`);
    const sources = a
      .flatMap((arg, i) => (arg === '--ro-bind' || arg === '--bind' ? [a[i + 1] ?? ''] : []))
      .filter((s) => s !== RUNTIME_DIR && s !== '/img/built');
    for (const hostDir of ['/work', '/home', '/root', '/var', '/sys'])
      expect(
        sources.some((s) => s === hostDir || s.startsWith(`${hostDir}/`)),
        hostDir,
      ).toBe(false);
    expect(a.slice(a.indexOf('--') + 1)).toEqual(['/usr/bin/true']);
  });

  it('binds a list of /etc entries, never /etc itself, and generated passwd/group/hosts', () => {
    const a = args(false);
    const etcBinds = a.flatMap((arg, i) =>
      arg === '--ro-bind' && (a[i + 2] ?? '').startsWith('/etc') ? [[a[i + 1], a[i + 2]]] : [],
    );
    expect(etcBinds.map(([, dest]) => dest)).not.toContain('/etc');
    for (const secret of [
      '/etc/shadow',
      '/etc/gshadow',
      '/etc/ssh',
      '/etc/ssl/private',
      '/etc/sudoers',
      '/etc/pip.conf',
      '/etc/npmrc',
      '/etc/apt',
    ]) {
      expect(
        etcBinds.some(([, dest]) => dest === secret || (dest ?? '').startsWith(`${secret}/`)),
        secret,
      ).toBe(false);
    }
    for (const file of ['passwd', 'group', 'hosts'])
      expect(etcBinds).toContainEqual([`${layout.etc}/${file}`, `/etc/${file}`]);
    expect(etcBinds.map(([, dest]) => dest)).not.toContain('/etc/resolv.conf');
    if (existsSync('/etc/resolv.conf'))
      expect(args(true).join(' ')).toContain('--ro-bind /etc/resolv.conf /etc/resolv.conf');
  });

  it('leaves tmpfs unsized when bwrap cannot size it', () => {
    const a = bwrapArgs({
      layout,
      network: false,
      env: {},
      hostname: 'sb1',
      command: ['/usr/bin/true'],
      tmpfsBytes: undefined,
      tmpfsPerms: false,
      imageSource: null,
    });
    expect(a).not.toContain('--size');
    expect(a.join(' ')).toContain(`--tmpfs ${JAIL.testbed}`);
    expect(a.join(' ')).not.toContain(JAIL.image);
  });
});

describeWith([bwrapNeed()], 'checkIsolation', () => {
  it('reports a working bubblewrap on this machine', () => {
    expect(checkIsolation()).toMatchObject({
      bwrap: true,
      version: expect.stringMatching(/^bubblewrap /),
      tmpfsSize: true,
      tmpfsPerms: true,
    });
  });
});
