// The browser tests stop with what to run when chromium is missing, not with a raw launcher error.
import { describe, expect, it } from 'vitest';
import { chromiumOrExplain } from '../browser/chromium';

describe('browser test prerequisites', () => {
  it('names ensure-chromium.sh when no chromium exists', () => {
    expect(() => chromiumOrExplain(['', '/nonexistent/chromium'])).toThrow(/chromium is not installed: run `bash scripts\/ensure-chromium\.sh`.*`npm run test:browser`/);
    expect(chromiumOrExplain(['/nonexistent/chromium', process.execPath])).toBe(process.execPath);
  });
});
