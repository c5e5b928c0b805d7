// What the doctor reads from dsh: the rows of `--dump-config` (with their inject lists) and the message of a failed run.
import { describe, expect, it } from 'vitest';
import { errorLine, parseDumpRows } from '../../src/cli/doctor/dsh-probe';

describe('parseDumpRows', () => {
  it('reads id, name, disabled, source and the inject list in either YAML form', () => {
    const rows = parseDumpRows(
      [
        '# == @deepseek-ai/dsh-sdk-app, patched by /h/profiles/sdk/cordis.patch.yml',
        '- id: sdk-app-startup',
        "  name: '@deepseek-ai/dsh-sdk-app'",
        '  config:',
        '    profile: sdk',
        '  disabled: true',
        '- id: sdk-jsonrpc-server',
        "  name: '@deepseek-ai/dsh-sdk-jsonrpc-server'",
        '  inject:',
        '    - loader',
        "    - 'agents'",
        '  config:',
        '    maxTokensAsSuccess: !!js >-',
        '      - not an inject item',
        '- id: other',
        '  inject: [sdkAppStartup, loader]',
      ].join('\n'),
    );
    expect(rows).toEqual([
      { id: 'sdk-app-startup', name: '@deepseek-ai/dsh-sdk-app', disabled: true, source: '@deepseek-ai/dsh-sdk-app, patched by /h/profiles/sdk/cordis.patch.yml' },
      { id: 'sdk-jsonrpc-server', name: '@deepseek-ai/dsh-sdk-jsonrpc-server', inject: ['loader', 'agents'], source: '@deepseek-ai/dsh-sdk-app, patched by /h/profiles/sdk/cordis.patch.yml' },
      { id: 'other', inject: ['sdkAppStartup', 'loader'], source: '@deepseek-ai/dsh-sdk-app, patched by /h/profiles/sdk/cordis.patch.yml' },
    ]);
  });
});

describe('errorLine', () => {
  it('takes the thrown error\'s message from a Node stack trace, not its last line', () => {
    const stack = [
      'file:///x/lib/index.js:543',
      "\t\tif (template === void 0) throw new Error(`${binName}: profile ${JSON.stringify(name)} does not exist`);",
      '\t\t                               ^',
      '',
      'Error: dsh: profile "nope" does not exist; create it with \'dsh plugin --profile nope add <package>\'',
      '    at loadProfile (file:///x/lib/index.js:543:34)',
      '',
      'Node.js v24.22.3',
    ].join('\n');
    expect(errorLine(stack)).toBe('dsh: profile "nope" does not exist; create it with \'dsh plugin --profile nope add <package>\'');
    expect(errorLine("TypeError [ERR_INVALID_ARG_TYPE]: The \"path\" argument must be of type string\n    at f (x:1)\nNode.js v24")).toBe('The "path" argument must be of type string');
    expect(errorLine('some warning\ndsh: requires the Cordis HMR service\n')).toBe('dsh: requires the Cordis HMR service');
    expect(errorLine('only this\n')).toBe('only this');
    expect(errorLine('')).toBe('');
  });
});
