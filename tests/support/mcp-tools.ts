/** The tools `vigil mcp` serves, over stdio and over HTTP alike (tests/e2e/mcp.test.ts, mcp-http.test.ts). */
export const MCP_TOOLS: readonly string[] = [
  'vigil_start',
  'vigil_status',
  'vigil_pause',
  'vigil_resume',
  'vigil_stop',
  'vigil_input',
  'vigil_review',
  'vigil_budget',
  'vigil_waive',
  'vigil_rewind',
  'vigil_checkpoints',
  'vigil_report',
  'vigil_memory_search',
  'vigil_task_complete',
];
