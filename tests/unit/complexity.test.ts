/**
 * Effort that fits the task: the measure of a PRD and a repository (activities/repo-measure.ts,
 * against real git repositories), the tier it detects and what each tier sets
 * (rules/complexity.ts), on three samples: a one-function change, a feature, and a
 * change across services.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { measureRepository } from '../../activities/repo-measure.js';
import { ComplexityRecordSchema, type RepoMeasure } from '../../schemas/effort.js';
import { defaultKnobs } from '../../schemas/knobs.js';
import {
  complexityLine,
  decideComplexity,
  detectComplexity,
  effectiveKnobs,
  knobsGiven,
  knobsGivenOf,
  measurePrd,
} from '../../rules/complexity.js';
import { ceilingTier } from '../../rules/tier-ceiling.js';
import { makeRepo } from '../support/harness.js';

function writePrdFile(dir: string, name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

const ONE_FUNCTION_PRD =
  '# Fix slugify\n\nThe `slugify` function in `src/slug.js` keeps trailing dashes. Make it strip them, and add a test.\n';

const FEATURE_PRD = [
  '# Export reports as CSV',
  '',
  'Users of the reporting page want to download what they see. Today they copy the table by hand, which loses the number ' +
    'formats and takes minutes for a long report.',
  '',
  '## Export button',
  'A button above the report table downloads the current report, with the filters applied, as a CSV file named after the report and the date.',
  '## Columns',
  'The columns are the ones shown, in the order shown, with the headers as shown. Numbers keep their precision; dates are ISO 8601.',
  '## Large reports',
  'A report of more than 10,000 rows is streamed rather than built in memory, so the page stays responsive while the file is written.',
  '## Permissions',
  'Only users who can see a report can export it; the export endpoint checks the same rule as the page.',
  '## Tests',
  'Unit tests for the CSV writer (quoting, commas and newlines in cells, unicode), and an API test of the export endpoint with filters.',
  '',
  '- [ ] the button',
  '- [ ] the endpoint',
  '- [ ] streaming',
  '',
  'Out of scope: Excel files, scheduled exports, and exports of dashboards. The existing JSON endpoint stays as it is; nothing ' +
    'else changes for the people who use it today.',
  'We expect the feature to be used daily by the finance team, who currently spend about an hour a week copying tables into spreadsheets by hand.',
].join('\n');

const SERVICES_PRD = [
  '# Checkout across services',
  '',
  'The orders service takes payments with Stripe and the notifications service sends a receipt by email; the gateway routes both.',
  '',
  '## Orders',
  'Create the payment intent and record the order.',
  '## Notifications',
  'Send the receipt when the payment succeeds (a webhook from Stripe).',
  '## Gateway',
  'Route /checkout and /webhooks/stripe.',
].join('\n');

const COMPOSE = [
  'services:',
  '  gateway:',
  '    build: ./gateway',
  '  orders:',
  '    build: ./orders',
  '  notifications:',
  '    build: ./notifications',
  '',
].join('\n');

describe('three sample tasks, measured on real repositories', () => {
  it('a one-function change in a small repository is simple: 3 phases, council from iteration 1 every 3, 2 specialists', async () => {
    const repo = makeRepo({
      files: { 'src/slug.js': 'export const slugify = (s) => s;\n', 'test/slug.test.js': '// tests\n', 'README.md': '# s\n' },
    });
    const prd = writePrdFile(repo, 'PRD.md', ONE_FUNCTION_PRD);
    const m = await measureRepository(repo, prd);
    expect(m).toMatchObject({ sourceFiles: 2, languages: ['JavaScript'], services: 0, microservices: false });
    expect(m.prd.features).toBe(0);
    const c = decideComplexity('auto', m, defaultKnobs(), knobsGiven([]));
    expect(c?.tier).toBe('simple');
    expect(c?.phases).toEqual(['IMPLEMENT', 'TEST', 'DEPLOY']);
    const k = effectiveKnobs(defaultKnobs(), c);
    expect({ size: k.councilSize, min: k.councilMinIterations, every: k.councilCheckInterval, review: k.reviewComplexity }).toEqual({
      size: 3,
      min: 1,
      every: 3,
      review: 'simple',
    });
  });

  it('a feature in a repository of twenty files is standard: 6 phases, the default council and panel', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) files[`src/module${i}.ts`] = `export const m${i} = ${i};\n`;
    const repo = makeRepo({ files });
    const prd = writePrdFile(repo, 'PRD.md', FEATURE_PRD);
    const m = await measureRepository(repo, prd);
    expect(m.sourceFiles).toBe(20);
    expect(m.prd.words).toBeGreaterThanOrEqual(200);
    expect(m.prd.features).toBe(8);
    const c = decideComplexity('auto', m, defaultKnobs(), knobsGiven([]));
    expect(c?.tier).toBe('standard');
    expect(c?.phases).toHaveLength(6);
    const k = effectiveKnobs(defaultKnobs(), c);
    expect({ size: k.councilSize, min: k.councilMinIterations, every: k.councilCheckInterval, review: k.reviewComplexity }).toEqual({
      size: 3,
      min: 3,
      every: 5,
      review: 'standard',
    });
  });

  it('a change across three services with Stripe is complex: 8 phases, a council of 5, 4 specialists', async () => {
    const repo = makeRepo({
      files: {
        'docker-compose.yml': COMPOSE,
        'gateway/main.go': 'package main\n',
        'orders/app.py': 'print(1)\n',
        'notifications/index.ts': 'export {};\n',
      },
    });
    const prd = writePrdFile(repo, 'PRD.md', SERVICES_PRD);
    const m = await measureRepository(repo, prd);
    expect(m).toMatchObject({ sourceFiles: 3, services: 3, microservices: true });
    expect(m.languages.sort()).toEqual(['Go', 'Python', 'TypeScript']);
    expect(m.prd.integrations).toEqual(['Stripe']);
    const c = decideComplexity('auto', m, defaultKnobs(), knobsGiven([]));
    expect(c?.tier).toBe('complex');
    expect(c?.reasons).toEqual(['external integrations: Stripe', 'microservices (3 services)']);
    expect(c?.phases).toHaveLength(8);
    const k = effectiveKnobs(defaultKnobs(), c);
    expect({ size: k.councilSize, min: k.councilMinIterations, every: k.councilCheckInterval, review: k.reviewComplexity }).toEqual({
      size: 5,
      min: 3,
      every: 5,
      review: 'complex',
    });
    expect(ComplexityRecordSchema.parse(c)).toEqual(c);
  });

  it('files under node_modules, dist and .vigil are not the project, and a k8s/ folder is microservices', async () => {
    const repo = makeRepo({ files: { 'a.py': '1\n', 'k8s/api.yaml': 'kind: Deployment\n', 'k8s/web.yaml': 'kind: Deployment\n' } });
    mkdirSync(path.join(repo, 'node_modules/x'), { recursive: true });
    writeFileSync(path.join(repo, 'node_modules/x/index.js'), '1\n');
    mkdirSync(path.join(repo, 'dist'), { recursive: true });
    writeFileSync(path.join(repo, 'dist/a.js'), '1\n');
    const m = await measureRepository(repo, undefined);
    expect(m).toMatchObject({ sourceFiles: 1, services: 2, microservices: true, prd: { words: 0, features: 0 } });
  });
});

const measure = (over: Partial<Omit<RepoMeasure, 'prd'>> & { prd?: Partial<RepoMeasure['prd']> } = {}): RepoMeasure => ({
  sourceFiles: 3,
  languages: ['Python'],
  services: 0,
  microservices: false,
  ...over,
  prd: { words: 50, features: 1, integrations: [], kinds: [], ...over.prd },
});

describe('detection at its limits (seed 003 §14.1)', () => {
  it.each([
    [measure({ sourceFiles: 5 }), 'simple'],
    [measure({ sourceFiles: 6 }), 'standard'],
    [measure({ sourceFiles: 50 }), 'standard'],
    [measure({ sourceFiles: 51 }), 'complex'],
    [measure({ prd: { words: 199 } }), 'simple'],
    [measure({ prd: { words: 200 } }), 'standard'],
    [measure({ prd: { words: 1000 } }), 'standard'],
    [measure({ prd: { words: 1001 } }), 'complex'],
    [measure({ prd: { features: 4 } }), 'simple'],
    [measure({ prd: { features: 5 } }), 'standard'],
    [measure({ prd: { features: 16 } }), 'complex'],
    [measure({ prd: { integrations: ['AWS'] } }), 'complex'],
    [measure({ languages: ['Python', 'Shell', 'SQL'] }), 'standard'],
    [measure({ prd: { kinds: ['api', 'ui', 'data'] } }), 'standard'],
    [measure({ services: 1 }), 'simple'],
  ] as const)('%j -> %s', (m, tier) => {
    expect(detectComplexity(m).tier).toBe(tier);
  });

  it('a PRD names its features by headings below the title and checkboxes, or by the items of a JSON PRD', () => {
    expect(measurePrd('# T\n\n## a\n## b\n- [ ] c\n- [x] d\n').features).toBe(4);
    expect(measurePrd('{"features":["a","b",{"steps":["x","y"]}]}', true).features).toBe(5);
    expect(measurePrd('{not json\n## a\n', true).features).toBe(1);
    expect(measurePrd('Sign in with OAuth, store sessions in Postgres, serve a REST API and a login page.').kinds).toEqual(
      expect.arrayContaining(['api', 'ui', 'data', 'security', 'integration']),
    );
  });
});

describe('explicit knobs win', () => {
  it('a knob the person set keeps its value and is listed as kept; the others follow the tier', () => {
    const knobs = { ...defaultKnobs(), councilMinIterations: 3 };
    const c = decideComplexity('auto', measure(), knobs, knobsGiven(['councilMinIterations', 'provider']));
    expect(c?.kept).toEqual(['councilMinIterations']);
    expect(effectiveKnobs(knobs, c)).toMatchObject({ councilMinIterations: 3, councilCheckInterval: 3, reviewComplexity: 'simple' });
    expect(complexityLine(c!)).toContain('explicit knobs win: councilMinIterations');
  });

  it('without a list from the client every knob counts as set: the complexity is shown and changes nothing', () => {
    const knobs = { ...defaultKnobs(), councilSize: 1 };
    const c = decideComplexity('complex', null, knobs, knobsGiven(undefined));
    expect(c).toMatchObject({ tier: 'complex', source: 'knob', applied: {} });
    expect(c?.kept).toEqual(['councilSize', 'councilMinIterations', 'councilCheckInterval', 'reviewComplexity']);
    expect(effectiveKnobs(knobs, c)).toEqual(knobs);
  });

  it('the client lists the knobs whose value came from a flag, --set, the environment or a file', () => {
    const sources = { councilSize: { source: 'flag' }, councilMinIterations: { source: 'default' }, tier: { source: 'env' } };
    expect(knobsGivenOf({ sources })).toEqual(['councilSize', 'tier']);
  });

  it('the pinned tier runs under the maxTier ceiling, for every role', () => {
    expect(effectiveKnobs({ ...defaultKnobs(), tier: 'planning', maxTier: 'development' }, null).tier).toBe('development');
    expect(effectiveKnobs({ ...defaultKnobs(), tier: 'fast', maxTier: 'development' }, null).tier).toBe('fast');
    expect(ceilingTier('planning', 'fast')).toBe('fast');
    expect(ceilingTier('development', 'planning')).toBe('development');
  });

  it('off detects nothing and changes no knob; auto with nothing measured neither', () => {
    expect(decideComplexity('off', measure(), defaultKnobs(), new Set())).toBeNull();
    expect(decideComplexity('auto', null, defaultKnobs(), new Set())).toBeNull();
    expect(effectiveKnobs(defaultKnobs(), null)).toEqual(defaultKnobs());
  });
});
