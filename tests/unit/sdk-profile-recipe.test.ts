// One sdk profile recipe: the e2e installer (scripts/install-dsh.mjs), the doctor (src/cli/doctor/sdk-profile.ts) and the
// steps of the docs page the READMEs link (docs/sdk.md, docs/sdk.zh.md) name the same packages, overrides and rows.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SDK_OVERRIDES, SDK_PACKAGES, SDK_PATCH_LINES, SDK_WORKSPACE_LINES } from '../../src/cli/doctor/sdk-profile';

const root = path.resolve(import.meta.dirname, '../..');
const installer = readFileSync(path.join(root, 'scripts', 'install-dsh.mjs'), 'utf8');

function constant(name: string): unknown {
  const match = new RegExp(`^const ${name} = (.+);$`, 'm').exec(installer);
  if (!match) throw new Error(`no const ${name} in install-dsh.mjs`);
  return JSON.parse((match[1] as string).replace(/'/g, '"').replace(/([{,]\s*)"?([\w@/-]+)"?\s*:/g, '$1"$2":'));
}

function template(name: string): string {
  const match = new RegExp(`^const ${name} = \`([\\s\\S]*?)\`;$`, 'm').exec(installer);
  if (!match) throw new Error(`no template ${name} in install-dsh.mjs`);
  return match[1] as string;
}

describe('the sdk profile recipe', () => {
  it('is the same in the e2e installer and the doctor', () => {
    expect(constant('SDK_PACKAGES')).toEqual([...SDK_PACKAGES]);
    expect(constant('SDK_OVERRIDES')).toEqual(SDK_OVERRIDES);
    expect(parse(template('SDK_PATCH'))).toEqual(parse(SDK_PATCH_LINES.join('\n')));
    expect(parse(SDK_WORKSPACE_LINES.join('\n'))).toEqual({ packages: ['.'], nodeLinker: 'hoisted', autoInstallPeers: false, overrides: SDK_OVERRIDES });
  });

  for (const [readme, page] of [['README.md', 'docs/sdk.md'], ['README.zh.md', 'docs/sdk.zh.md']] as const) {
    it(`is what ${page} tells a person to write and add, and ${readme} links it`, () => {
      expect(readFileSync(path.join(root, readme), 'utf8')).toContain(`](${page})`);
      const text = readFileSync(path.join(root, page), 'utf8');
      const file = (name: string) => {
        const match = new RegExp(`cat > ${name.replace('.', '\\.')} <<'EOF'\\n([\\s\\S]*?)\\nEOF\\n`).exec(text);
        if (!match) throw new Error(`${page} has no heredoc for ${name}`);
        return match[1] as string;
      };
      expect(file('pnpm-workspace.yaml')).toBe(SDK_WORKSPACE_LINES.join('\n'));
      expect(file('cordis.patch.yml')).toBe(SDK_PATCH_LINES.join('\n'));
      expect(text).toContain(`dsh plugin --profile sdk add ${SDK_PACKAGES.join(' ')}\n`);
      // The acp recipe, given in words: the installer's package and overrides.
      for (const spec of constant('ACP_PACKAGES') as string[]) expect(text).toContain(`\`${spec}\``);
      for (const [name, version] of Object.entries(constant('ACP_OVERRIDES') as Record<string, string>)) expect(text).toContain(`\`'${name}': ${version}\``);
      expect(template('ACP_PATCH')).toMatch(/- id: acp-app-startup\n {2}disabled: true\n[\s\S]*- id: acp\n {2}inject: \[agents\]/);
    });
  }
});
