/**
 * An issue as a run's PRD (`vigil start --issue FILE`): its task list is the PRD checklist
 * (rules/checklist/file.ts parseIssueChecklist) and the file is checked as a PRD is
 * (cli/prd.ts readIssue). The start itself, end to end: tests/e2e/start-issue.test.ts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PrdError, readIssue } from '../../cli/prd.js';
import { parseIssueChecklist } from '../../rules/checklist/file.js';

const ISSUE = `# Export the report as CSV

Users ask for a CSV export of the weekly report. Steps to reproduce the need:

- open the report
- look for an export button: there is none

## Acceptance

- [ ] A "CSV" button on the report page downloads the report — click it, open the file
- [x] (critical) The columns are the table's, in its order
- [ ] EXP-3: dates in ISO 8601
  - [ ] a nested box is a detail of the item above

\`\`\`
- [ ] a box in a code block is an example, not a requirement
\`\`\`

Thanks!
`;

describe('parseIssueChecklist', () => {
  it("reads the task list's boxes, ticked or not, and nothing else", () => {
    const r = parseIssueChecklist(ISSUE, 'issue.md');
    expect(r?.ok).toBe(true);
    if (!r?.ok) return;
    expect(r.items.map((i) => [i.id, i.priority, i.title, i.verify])).toEqual([
      ['REQ-1', 'medium', 'A "CSV" button on the report page downloads the report', 'click it, open the file'],
      ['REQ-2', 'critical', "The columns are the table's, in its order", ''],
      ['EXP-3', 'medium', 'dates in ISO 8601', ''],
    ]);
  });

  it('is null for an issue without a task list: plain bullets are prose there', () => {
    expect(parseIssueChecklist('# Bug\n\n- it crashes\n- on start\n', 'issue.md')).toBeNull();
    expect(parseIssueChecklist('# Bug\n\n```\n- [ ] not a box\n```\n', 'issue.md')).toBeNull();
  });

  it('names the file and line of a bad task line', () => {
    const r = parseIssueChecklist('# Bug\n\n- [ ] A-1: first\n- [ ] A-1: again\n', 'issue.md');
    expect(r).toEqual({ ok: false, error: 'issue.md:4: duplicate id A-1 (first on line 3)' });
  });
});

describe('readIssue', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-issue-'));
  const file = (name: string, text: string | Buffer): string => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it('is the PRD, titled by its first heading, with its task list as the checklist', () => {
    const p = file('issue.md', ISSUE);
    const issue = readIssue(p);
    expect(issue.prd).toMatchObject({ path: p, title: 'Export the report as CSV' });
    expect(issue.checklist?.map((i) => i.id)).toEqual(['REQ-1', 'REQ-2', 'EXP-3']);
  });

  it('has no checklist when the issue has no task list', () => {
    expect(readIssue(file('plain.md', '# Bug\n\nIt crashes on start.\n')).checklist).toBeNull();
  });

  it('is refused as a PRD is, the error naming an issue', () => {
    expect(() => readIssue(path.join(dir, 'missing.md'))).toThrow(new PrdError(`issue file not found: ${path.join(dir, 'missing.md')}`));
    expect(() => readIssue(file('empty.md', '  \n'))).toThrow(/^issue file is empty: .*; write the requirements first$/);
    expect(() => readIssue(file('binary.md', Buffer.from([0x23, 0x00, 0x41])))).toThrow(/^issue file looks binary/);
    expect(() => readIssue(file('dup.md', '# T\n\n- [ ] A-1: x\n- [ ] A-1: y\n'))).toThrow(/dup\.md:4: duplicate id A-1/);
  });
});
