import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RolloutError } from '@rollout-fleet/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageTemplateName, resolveImage } from './resolve-image.js';

let imagesDir: string;
beforeAll(async () => {
  imagesDir = await mkdtemp(join(tmpdir(), 'rf-images-'));
  await mkdir(join(imagesDir, 'sweb.eval.x86_64.django_1776_django-11099'));
  await mkdir(join(imagesDir, 'python'));
});
afterAll(async () => {
  await rm(imagesDir, { recursive: true, force: true });
});

describe('resolveImage', () => {
  it('maps registry references to <imagesDir>/<last component without tag or digest>', () => {
    const ref =
      'enterprise-public-cn-beijing.cr.volces.com/swe-bench-verified/sweb.eval.x86_64.django_1776_django-11099:v2';
    expect(resolveImage(ref, imagesDir)).toBe(join(imagesDir, 'sweb.eval.x86_64.django_1776_django-11099'));
    expect(resolveImage('python:3.12@sha256:abc', imagesDir)).toBe(join(imagesDir, 'python'));
    expect(resolveImage('python', imagesDir)).toBe(join(imagesDir, 'python'));
    expect(imageTemplateName('localhost:5000/team/img:tag')).toBe('img');
  });

  it('accepts file:/abs/path', () => {
    expect(resolveImage(`file:${imagesDir}/python`, imagesDir)).toBe(`${imagesDir}/python`);
  });

  it('rejects unknown images with a start failure the control plane maps to function_initialize_failed', () => {
    for (const image of ['nope:latest', 'file:relative/dir', 'file:/does/not/exist', '..', 'registry/']) {
      let thrown: unknown;
      try {
        resolveImage(image, imagesDir);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, image).toBeInstanceOf(RolloutError);
      expect((thrown as RolloutError).code).toBe('SANDBOX_START_FAILED');
      expect((thrown as RolloutError).details.errorCode).toBe('function_initialize_failed');
    }
  });
});
