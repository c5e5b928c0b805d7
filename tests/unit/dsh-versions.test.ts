// How the bundle declares the dsh versions it supports (decision 0120): no dsh peer range and no engines.dsh in the
// manifest, so the version check reported from 0.1.7 (modelled in tests/helpers/peer-range.ts) admits every dsh; the
// versions table doctor prints against (src/cli/doctor/dsh-versions.ts) and the install tables that show it (docs/install.md, docs/install.zh.md).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dshSupport, DSH_VERSIONS, needsHmrWorkarounds, parseVersion, TESTED_DSH } from '../../src/cli/doctor/dsh-versions';
import { peerCheck, satisfies } from '../helpers/peer-range';

const root = path.resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, any>;
const SUPPORTED = ['0.1.0-rc.8', '0.1.7', '0.1.8', '0.2.0-rc.2', '0.2.0', '0.2.1-alpha.1', '0.2.1-alpha.3'];

describe('the version declaration', () => {
  it('names no dsh package at all: no peer (optional or not), no dependency, no engines.dsh', () => {
    for (const field of ['peerDependencies', 'peerDependenciesMeta', 'dependencies', 'optionalDependencies', 'devDependencies']) {
      expect(Object.keys(manifest[field] ?? {}).filter((name) => name.startsWith('@deepseek-ai/')), field).toEqual([]);
    }
    expect(manifest.engines).toEqual({ node: '>=20' });
    // What dsh reads is the bundle patch; nothing else under `dsh`.
    expect(manifest.dsh).toEqual({ bundle: { patch: './dsh-plugin/cordis.patch.yml' } });
  });

  it("the reported check admits it on every dsh we mean to support, and on any other (an absent range refuses nothing)", () => {
    for (const version of [...SUPPORTED, '0.1.0-rc.6', '0.3.0', '1.0.0-beta.1']) expect(peerCheck(manifest, version), version).toEqual({ ok: true });
  });

  it('control: the ranges one might write refuse a supported prerelease, which is why none is declared', () => {
    const withRange = (range: string) => ({ ...manifest, peerDependencies: { '@deepseek-ai/dsh': range } });
    expect(peerCheck(withRange('>=0.1.0-rc.8 <0.3.0-0'), '0.2.0-rc.2')).toEqual({ ok: false, code: 'incompatible-version', name: '@deepseek-ai/dsh', range: '>=0.1.0-rc.8 <0.3.0-0' });
    expect(peerCheck(withRange('>=0.1.0-rc.8 <0.3.0-0'), '0.2.1-alpha.1').ok).toBe(false);
    expect(peerCheck(withRange('^0.1.0-rc.8'), '0.2.0-rc.2').ok).toBe(false);
    expect(peerCheck(withRange('^0.1.0-rc.8 || ^0.2.0'), '0.2.1-alpha.3').ok).toBe(false);
    // A dsh-* package's range counts too; other packages' do not, and engines.dsh is ignored.
    expect(peerCheck({ peerDependencies: { '@deepseek-ai/dsh-agent': '^0.1.0' } }, '0.2.0').ok).toBe(false);
    expect(peerCheck({ peerDependencies: { '@deepseek-ai/cordis': '^9' }, engines: { dsh: '^9' } }, '0.2.0').ok).toBe(true);
  });

  it('the model of the check counts prereleases as semver does', () => {
    expect(satisfies('0.1.0-rc.8', '>=0.1.0-rc.8 <0.3.0-0')).toBe(true);
    expect(satisfies('0.1.0-rc.9', '^0.1.0-rc.8')).toBe(true);
    expect(satisfies('0.1.0-rc.10', '>=0.1.0-rc.8')).toBe(true);
    expect(satisfies('0.1.0-rc.6', '>=0.1.0-rc.8')).toBe(false);
    expect(satisfies('0.1.7', '^0.1.0-rc.8')).toBe(true);
    expect(satisfies('0.2.0', '^0.1.0-rc.8')).toBe(false);
    expect(satisfies('1.4.2', '^1.2.3')).toBe(true);
    expect(satisfies('2.0.0-0', '^1.2.3')).toBe(false);
    expect(satisfies('1.3.0', '~1.2.3')).toBe(false);
    expect(satisfies('1.2.9', '~1.2.3')).toBe(true);
    expect(satisfies('0.2.0-rc.2', '*')).toBe(false);
    expect(satisfies('0.2.0', '*')).toBe(true);
    expect(satisfies('0.2.0', '=0.2.0')).toBe(true);
    expect(satisfies('not a version', '*')).toBe(false);
    expect(satisfies('0.2.0', '>=nonsense')).toBe(false);
    expect(satisfies('0.1.0-alpha.1', '>=0.1.0-alpha.beta')).toBe(false);
    expect(satisfies('0.1.0-alpha.beta', '>=0.1.0-alpha.1')).toBe(true);
  });
});

describe('the versions table', () => {
  it('tells tested, expected to work, older and newer apart (prereleases go with their line)', () => {
    expect(TESTED_DSH).toBe('0.1.0-rc.8');
    expect(dshSupport('0.1.0-rc.8').support).toBe('tested');
    for (const version of ['0.1.7', '0.1.7-rc.1', '0.1.9', '0.2.0-rc.2', '0.2.1-alpha.3', '0.2.5']) expect(dshSupport(version).support, version).toBe('expected');
    expect(dshSupport('0.1.7').row?.label).toBe('0.1.7');
    expect(dshSupport('0.2.1-alpha.3').row?.label).toBe('0.2.x');
    for (const version of ['0.1.0-rc.6', '0.1.5-rc.2', '0.1.0', '0.1.6', 'garbage', '']) expect(dshSupport(version).support, version).toBe('untested');
    for (const version of ['0.3.0', '0.3.0-alpha.1', '1.0.0']) expect(dshSupport(version).support, version).toBe('newer');
    expect(parseVersion('v0.2.0-rc.2+build.7')).toEqual({ major: 0, minor: 2, patch: 0, prerelease: 'rc.2' });
    expect(parseVersion('0.2')).toBeUndefined();
  });

  it("rc.8's start-up workarounds belong to the 0.1.0 release candidates only", () => {
    expect(needsHmrWorkarounds('0.1.0-rc.8')).toBe(true);
    expect(needsHmrWorkarounds('0.1.0-rc.6')).toBe(true);
    for (const version of ['0.1.0', '0.1.7', '0.2.0-rc.2', 'junk']) expect(needsHmrWorkarounds(version), version).toBe(false);
  });

  it('is the table docs/install.md shows, in both languages', () => {
    const rows = (file: string) =>
      readFileSync(path.join(root, file), 'utf8')
        .split('\n')
        .filter((line) => /^\| (0\.|any other|其他版本)/.test(line))
        .map((line) => line.split('|')[1]!.trim());
    expect(rows('docs/install.md')).toEqual([...DSH_VERSIONS.map((r) => r.label), 'any other']);
    expect(rows('docs/install.zh.md')).toEqual([...DSH_VERSIONS.map((r) => r.label), '其他版本']);
    for (const file of ['docs/install.md', 'docs/install.zh.md']) {
      const lines = readFileSync(path.join(root, file), 'utf8').split('\n');
      for (const row of DSH_VERSIONS) {
        const line = lines.find((l) => l.startsWith(`| ${row.label} |`))!;
        expect(line.split('|')[2]!.trim(), `${file}: ${row.label}`).toBe(row.support === 'tested' ? (file.endsWith('.zh.md') ? '已测试' : 'tested') : file.endsWith('.zh.md') ? '应当可以用' : 'expected to work');
      }
    }
  });
});
