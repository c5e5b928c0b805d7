// Which Dida is meant: flags, then config.yaml (what `login` and `sim --use` save), then the plugin row; and how a
// login changes config.yaml (a login to real Dida undoes a saved simulator address).
import { describe, expect, it } from 'vitest';
import { loginChange } from '../../src/cli/credentials-save';
import { resolveEndpoint } from '../../src/wiring/runtime';

const SIM = 'http://127.0.0.1:18080/open/v1';

describe('resolveEndpoint', () => {
  it('defaults to real Dida365', () => {
    expect(resolveEndpoint([])).toEqual({ region: 'dida365', baseUrl: 'https://api.dida365.com/open/v1', explicit: false, source: 'default' });
  });

  it('for dsh, a base URL saved in config.yaml wins over the plugin row (whose region is always filled in)', () => {
    const dsh = resolveEndpoint([
      { source: 'config', baseUrl: SIM },
      { source: 'row', region: 'dida365' },
    ]);
    expect(dsh).toEqual({ region: 'dida365', baseUrl: SIM, explicit: true, source: 'config' });
    const ticktick = resolveEndpoint([
      { source: 'config', region: 'ticktick' },
      { source: 'row', region: 'dida365' },
    ]);
    expect(ticktick).toMatchObject({ region: 'ticktick', baseUrl: 'https://api.ticktick.com/open/v1', source: 'config' });
    expect(resolveEndpoint([{ source: 'config' }, { source: 'row', region: 'dida365', baseUrl: SIM }])).toMatchObject({ baseUrl: SIM, source: 'row' });
  });

  it('a flag decides for one command: --region means that region’s real service even when config.yaml names a simulator', () => {
    const layers = (flag: { region?: 'ticktick'; baseUrl?: string }) => [
      { source: 'flag' as const, ...flag },
      { source: 'config' as const, baseUrl: SIM, region: 'dida365' as const },
    ];
    expect(resolveEndpoint(layers({ region: 'ticktick' }))).toMatchObject({ baseUrl: 'https://api.ticktick.com/open/v1', source: 'flag' });
    expect(resolveEndpoint(layers({ baseUrl: 'http://127.0.0.1:1/open/v1' }))).toMatchObject({ baseUrl: 'http://127.0.0.1:1/open/v1', region: 'dida365', source: 'flag' });
    expect(resolveEndpoint(layers({}))).toMatchObject({ baseUrl: SIM, source: 'config' });
  });
});

describe('loginChange', () => {
  const saved = { version: 1 as const, baseUrl: SIM, region: 'dida365' as const, bindings: [{ cwd: '/p', projectId: 'x' }] };

  it('a login without --base-url (to real Dida) removes a saved simulator address and keeps everything else', () => {
    expect(loginChange({}, 'https://api.dida365.com/open/v1')(saved)).toEqual({ version: 1, region: 'dida365', bindings: [{ cwd: '/p', projectId: 'x' }] });
  });

  it('--base-url saves the checked address and --region the region', () => {
    expect(loginChange({ baseUrl: 'http://127.0.0.1:2/open/v1/' }, 'http://127.0.0.1:2/open/v1')({ version: 1, bindings: [] })).toEqual({ version: 1, baseUrl: 'http://127.0.0.1:2/open/v1', bindings: [] });
    expect(loginChange({ region: 'ticktick' }, 'https://api.ticktick.com/open/v1')(saved)).toEqual({ version: 1, region: 'ticktick', bindings: saved.bindings });
  });
});
