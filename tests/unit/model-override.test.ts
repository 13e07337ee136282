import { describe, expect, it } from 'vitest';
import { decideModelOverride, overrideNote } from '../../rules/model-override.js';

describe('the model-override file (spec §1.4)', () => {
  it('no file and an empty file are no override', () => {
    expect(decideModelOverride(null, 'claude', 'planning')).toBeNull();
    expect(decideModelOverride('  \n', 'claude', 'planning')).toBeNull();
  });

  it('a model name sets the tier, and claude’s model; trimmed and lowercased', () => {
    expect(decideModelOverride(' Opus\n', 'claude', 'planning')).toEqual({ tier: 'planning', model: 'opus', said: 'opus', capped: false });
    expect(decideModelOverride('haiku', 'claude', 'planning')).toEqual({ tier: 'fast', model: 'haiku', said: 'haiku', capped: false });
    expect(decideModelOverride('fable', 'claude', 'planning')).toMatchObject({ tier: 'planning', model: 'opus' });
    // Other providers: the tier only (their model for it comes from their own presets).
    expect(decideModelOverride('opus', 'codex', 'planning')).toEqual({ tier: 'planning', model: null, said: 'opus', capped: false });
    // A tier name sets the tier for every provider, claude's model from its preset.
    expect(decideModelOverride('development', 'claude', 'planning')).toEqual({
      tier: 'development',
      model: null,
      said: 'development',
      capped: false,
    });
  });

  it('never goes above the ceiling: the agent cannot buy itself a dearer model', () => {
    expect(decideModelOverride('opus', 'claude', 'development')).toEqual({
      tier: 'development',
      model: 'sonnet',
      said: 'opus',
      capped: true,
    });
    expect(decideModelOverride('planning', 'gemini', 'fast')).toEqual({ tier: 'fast', model: null, said: 'planning', capped: true });
    expect(decideModelOverride('haiku', 'claude', 'fast')).toMatchObject({ tier: 'fast', capped: false });
  });

  it('ignores anything else, with a note that says what it takes', () => {
    expect(decideModelOverride('gpt-5', 'claude', 'planning')).toEqual({
      ignored: '.vigil/model-override says "gpt-5", not one of haiku, sonnet, opus, fable, fast, development, planning: ignored',
    });
    // Not an own property of the table.
    expect(decideModelOverride('constructor', 'claude', 'planning')).toHaveProperty('ignored');
    expect(overrideNote({ ignored: 'x' })).toBe('x');
  });

  it('says in the record what ran', () => {
    expect(overrideNote({ tier: 'development', model: 'sonnet', said: 'opus', capped: true })).toBe(
      '.vigil/model-override "opus": ran at development (sonnet), capped by maxTier',
    );
    expect(overrideNote({ tier: 'fast', model: null, said: 'fast', capped: false })).toBe('.vigil/model-override "fast": ran at fast');
  });
});
