/**
 * chooseAgent (rules/agent-choice.ts): the provider, model and effort of every
 * call, for the builder and the reviewing roles.
 */
import { describe, expect, it } from 'vitest';
import { defaultKnobs, type Knobs } from '../../schemas/knobs.js';
import { chooseAgent } from '../../rules/agent-choice.js';

const k = (over: Partial<Knobs>): Knobs => ({ ...defaultKnobs(), ...over });

describe('chooseAgent', () => {
  it('leaves the model to the provider by default, and passes the command argv', () => {
    expect(chooseAgent(k({ agentCommand: ['my-agent', '-x'] }), 'iteration', 'development')).toEqual({
      provider: 'command',
      model: null,
      effort: null,
      fallbackModel: null,
      argv: ['my-agent', '-x'],
    });
    expect(chooseAgent(k({ provider: 'claude' }), 'iteration', 'planning')).toMatchObject({ provider: 'claude', model: null, argv: [] });
  });

  it('takes the per-tier model, and `model` over it', () => {
    const knobs = k({ provider: 'claude', modelPlanning: 'opus', modelFast: 'haiku' });
    expect(chooseAgent(knobs, 'iteration', 'planning').model).toBe('opus');
    expect(chooseAgent(knobs, 'iteration', 'fast').model).toBe('haiku');
    expect(chooseAgent(knobs, 'iteration', 'development').model).toBeNull();
    expect(chooseAgent({ ...knobs, model: 'sonnet' }, 'iteration', 'planning').model).toBe('sonnet');
  });

  it("gives reviewers their own provider and model, without the builder's argv, effort or models", () => {
    const knobs = k({ provider: 'claude', agentCommand: ['/opt/claude'], model: 'opus', effort: 'high', councilProvider: 'codex' });
    expect(chooseAgent(knobs, 'council', 'development')).toEqual({
      provider: 'codex',
      model: null,
      effort: null,
      fallbackModel: null,
      argv: [],
    });
    expect(chooseAgent({ ...knobs, councilModel: 'gpt-5.3-codex' }, 'devils-advocate', 'development').model).toBe('gpt-5.3-codex');
  });

  it("keeps the builder's provider, argv and tier model for reviewers when no council provider is set", () => {
    const knobs = k({ provider: 'codex', agentCommand: ['/opt/codex'], modelDevelopment: 'gpt-x', effort: 'low' });
    expect(chooseAgent(knobs, 'council', 'development')).toEqual({
      provider: 'codex',
      model: 'gpt-x',
      effort: 'low',
      fallbackModel: null,
      argv: ['/opt/codex'],
    });
    expect(chooseAgent({ ...knobs, councilModel: 'gpt-review' }, 'council', 'development').model).toBe('gpt-review');
  });

  it("gives the devil's advocate its own provider and model when set, else the council's", () => {
    const knobs = k({
      provider: 'claude',
      councilProvider: 'codex',
      councilModel: 'gpt-review',
      devilsAdvocateProvider: 'gemini',
      devilsAdvocateModel: 'gemini-2.5-pro',
    });
    expect(chooseAgent(knobs, 'devils-advocate', 'development')).toMatchObject({ provider: 'gemini', model: 'gemini-2.5-pro', argv: [] });
    expect(chooseAgent({ ...knobs, devilsAdvocateProvider: '', devilsAdvocateModel: '' }, 'devils-advocate', 'development')).toMatchObject({
      provider: 'codex',
      model: 'gpt-review',
    });
    expect(chooseAgent(knobs, 'council', 'development')).toMatchObject({ provider: 'codex', model: 'gpt-review' });
  });
});
