import { describe, expect, it } from 'vitest';
import { displayPath, resolvePaths } from '../../src/store/paths';

describe('displayPath', () => {
  it('abbreviates the home directory by whole segments', () => {
    expect(displayPath('/home/u/.config/dida-todo/config.yaml', '/home/u')).toBe('~/.config/dida-todo/config.yaml');
    expect(displayPath('/home/u', '/home/u')).toBe('~');
    expect(displayPath('/home/user2/x', '/home/u')).toBe('/home/user2/x');
    expect(displayPath('/etc/x', '/')).toBe('/etc/x');
  });

  it('shows the configured files under the home directory with ~', () => {
    const paths = resolvePaths({ HOME: '/home/u' });
    expect(displayPath(paths.configFile, '/home/u')).toBe('~/.config/dida-todo/config.yaml');
    expect(displayPath(paths.stateFile, '/home/u')).toBe('~/.local/state/dida-todo/state.json');
  });
});
