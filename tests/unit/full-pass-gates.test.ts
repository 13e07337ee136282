/** Where a gate pass runs the full-pass gates (build, app check, e2e, performance): after the tests group. */
import { describe, expect, it } from 'vitest';
import { fullPassGatesAfterTests } from '../../activities/gates/index.js';

describe('fullPassGatesAfterTests', () => {
  it('moves the build from the first group into the group after the tests', () => {
    expect(
      fullPassGatesAfterTests([['static_analysis', 'secret_scan', 'build'], ['tests'], ['mock_integrity', 'app_check', 'coverage']]),
    ).toEqual([['static_analysis', 'secret_scan'], ['tests'], ['build', 'app_check', 'mock_integrity', 'coverage']]);
  });
  it('gives them a group of their own when the tests group is the last', () => {
    expect(fullPassGatesAfterTests([['build'], ['tests']])).toEqual([['tests'], ['build']]);
  });
  it('leaves them where they are in a pass without the tests gate', () => {
    expect(fullPassGatesAfterTests([['static_analysis', 'build'], ['mock_integrity']])).toEqual([
      ['static_analysis', 'build'],
      ['mock_integrity'],
    ]);
  });
});
