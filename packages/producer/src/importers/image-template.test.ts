import { describe, expect, it } from 'vitest';
import { RolloutError } from '@rollout-fleet/shared';
import { imageForInstance } from './image-template.js';

describe('imageForInstance', () => {
  it('builds SWE-bench namespace names with __ spelled _1776_ (§4.1)', () => {
    expect(imageForInstance('django__django-11099', 'swebench/sweb.eval.x86_64.{instance_id_1776}:latest')).toBe(
      'swebench/sweb.eval.x86_64.django_1776_django-11099:latest',
    );
    expect(imageForInstance('Foo__Bar-1', 'docker.io/xingyaoww/sweb.eval.x86_64.{instance_id_s}:latest')).toBe(
      'docker.io/xingyaoww/sweb.eval.x86_64.foo_s_bar-1:latest',
    );
    expect(imageForInstance('Foo__Bar-1', 'local/{instance_id}/{instance_id_lower}')).toBe(
      'local/Foo__Bar-1/foo__bar-1',
    );
    expect(imageForInstance('x', 'fixed-image')).toBe('fixed-image');
  });

  it('rejects unknown placeholders with an INPUT_INVALID error naming them', () => {
    expect(() => imageForInstance('x', 'img/{instance}')).toThrow(RolloutError);
    expect(() => imageForInstance('x', 'img/{instance}')).toThrow(/unknown placeholder\(s\) \{instance\}/);
  });
});
