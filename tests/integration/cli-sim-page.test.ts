// `dida-todo sim` prints the address of its page (the person's phone), which opens with the token it carries and
// speaks the configured language.
import { mkdir, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeCliHome, type CliHome } from '../helpers/cli-harness';

let h: CliHome;
beforeEach(async () => {
  h = await makeCliHome();
});
afterEach(async () => {
  await h.cleanup();
});

async function open(address: string): Promise<{ page: string; lang: string }> {
  const first = await fetch(address, { redirect: 'manual' });
  expect(first.status).toBe(303);
  const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const page = await fetch(new URL(first.headers.get('location') ?? '/', address), { headers: { Cookie: cookie } });
  expect(page.status).toBe(200);
  const html = await page.text();
  return { page: html, lang: /<html lang="([^"]+)"/.exec(html)?.[1] ?? '' };
}

describe('dida-todo sim and its page', () => {
  it('prints the page address; it opens in Chinese by default', async () => {
    const run = h.start(['sim', '--port', '0'], { keepStdin: true });
    await run.waitFor(/Press Ctrl\+C/);
    const address = /^\s+(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/m.exec(run.out())?.[1] as string;
    expect(run.out()).toMatch(/Its page, your phone/);
    expect(address).toBeDefined();
    expect((await open(address)).lang).toBe('zh-CN');
    // Without the token in the address: the page explains, and nothing else.
    expect((await fetch(new URL('/', address))).status).toBe(403);
    run.signal('SIGINT');
    expect((await run.result).code).toBe(0);
  });

  it('follows config.yaml’s locale, and --json gives the page address to scripts', async () => {
    await mkdir(h.configDir, { recursive: true });
    await writeFile(h.configFile, 'locale: en\n');
    const run = h.start(['sim', '--port', '0', '--json'], { keepStdin: true });
    await run.waitFor(/pageUrl/);
    const line = JSON.parse(run.out().split('\n')[0] as string) as { pageUrl: string; token: string };
    expect(line.pageUrl).toContain(`token=${line.token}`);
    const { lang, page } = await open(line.pageUrl);
    expect(lang).toBe('en');
    expect(page).toContain('Dida simulator');
    run.signal('SIGINT');
    expect((await run.result).code).toBe(0);
  });
});
