/** Whether a Go toolchain is on PATH (the sandbox bridge's builds need one; tests without it say so and skip). */
import { execFileSync } from 'node:child_process';

export const hasGo = (() => {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
