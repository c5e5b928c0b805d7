// The near-miss rules: edit distance with swaps, the closest command or option, list-name typos, and the
// Ctrl+C clean-up of this process's temp files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeOwnTempFiles } from '../../src/cli/cli-interrupt';
import { closestWord } from '../../src/cli/near-miss';
import { editDistance, nearListNames, normaliseListName } from '../../src/core/text/near-names';

describe('editDistance', () => {
  it('counts an insertion, a deletion, a substitution and a swap of neighbours as one edit each, by code point', () => {
    expect(editDistance('status', 'status')).toBe(0);
    expect(editDistance('stauts', 'status')).toBe(1);
    expect(editDistance('jsno', 'json')).toBe(1);
    expect(editDistance('bind', 'bnd')).toBe(1);
    expect(editDistance('bind', 'binds')).toBe(1);
    expect(editDistance('工作清丹', '工作清单')).toBe(1);
    expect(editDistance('🚀发布', '🚀发')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('closestWord', () => {
  const commands = ['doctor', 'login', 'logout', 'status', 'bind', 'unbind', 'lists', 'sim', 'demo', 'help'];

  it('names the nearest command or option, and nothing when the word is far or already right', () => {
    expect(closestWord('stauts', commands)).toBe('status');
    expect(closestWord('STATUS', commands)).toBe('status');
    expect(closestWord('lgoin', commands)).toBe('login');
    expect(closestWord('jsno', ['json', 'help', 'cwd'])).toBe('json');
    expect(closestWord('xyzzy', commands)).toBeUndefined();
    expect(closestWord('status', commands)).toBeUndefined();
    // A one-letter word is never "one edit away" from everything.
    expect(closestWord('x', ['cwd', 'id'])).toBeUndefined();
  });
});

describe('list-name typos', () => {
  it('normalises width, case, spaces, punctuation and symbols', () => {
    expect(normaliseListName('Ｗｏｒｋ')).toBe('work');
    expect(normaliseListName(' 工作 · 清单！')).toBe('工作清单');
    expect(normaliseListName('🚀 Launch')).toBe('launch');
  });

  it('finds open lists a name is probably a typo of, closest first; exact names and far names are not', () => {
    const open = ['工作清单', 'Work', 'Personal notes', '家'];
    expect(nearListNames('工作清丹', open)).toEqual(['工作清单']);
    expect(nearListNames('工作 清单', open)).toEqual(['工作清单']);
    expect(nearListNames('work', open)).toEqual(['Work']);
    expect(nearListNames('Wrok', open)).toEqual(['Work']);
    expect(nearListNames('Personal note', open)).toEqual(['Personal notes']);
    expect(nearListNames('Work', open)).toEqual([]);
    expect(nearListNames('Home', open)).toEqual([]);
    expect(nearListNames('生活清单', open)).toEqual([]);
    // Two characters or fewer: only the same name after normalisation counts.
    expect(nearListNames('象', open)).toEqual([]);
    expect(nearListNames('家!', open)).toEqual(['家']);
    // Longer names allow one more edit for every five characters.
    expect(nearListNames('Persnal ntoes', open)).toEqual(['Personal notes']);
  });
});

describe('removeOwnTempFiles', () => {
  it('removes only this process’s temp files of atomic writes, in the folders given', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-temp-'));
    try {
      const names = [`.config.yaml.${process.pid}.0123456789ab.tmp`, `.config.yaml.${process.pid + 1}.0123456789ab.tmp`, 'config.yaml', `.state.json.${process.pid}.tmp`];
      for (const name of names) fs.writeFileSync(path.join(dir, name), 'x');
      expect(removeOwnTempFiles([dir, path.join(dir, 'missing')])).toBe(1);
      expect(fs.readdirSync(dir).sort()).toEqual(names.slice(1).sort());
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
