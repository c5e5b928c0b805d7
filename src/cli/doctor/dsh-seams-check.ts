// The doctor's look at what the running dsh lacks of the surfaces the bundle uses: the seam report the bundle keeps
// (src/dsh/host-seams.ts) for this dsh version, one line for the whole and one per missing surface with what does not work.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { safeText } from '../terminal-text';
import { parseSeamReport, seamOf, SEAM_REPORT_FILE } from '../../dsh/host-seams';
import type { CheckResult, DoctorCheck } from './doctor-types';
import { dshSupport } from './dsh-versions';

/** Surfaces without which the bundle does nothing at all (a failure; any other missing one is a warning). */
const ESSENTIAL = new Set(['tools', 'events']);

/** `2026-12-04 10:07` in this machine's zone. */
function when(at: number): string {
  const d = new Date(at);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

export const dshSeamsCheck: DoctorCheck = async (ctx) => {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.seams');
  const probe = await ctx.dsh();
  if (!probe.bin || !probe.version) return [{ id: 'dsh-seams', status: 'skip', title, detail: t('cli.doctor.needsDsh') }];
  const version = safeText(probe.version);
  let text: string | undefined;
  try {
    text = readFileSync(path.join(ctx.paths.stateDir, SEAM_REPORT_FILE), 'utf8');
  } catch {
    text = undefined;
  }
  const entry = parseSeamReport(text).dsh[probe.version];
  if (!entry) {
    const tested = dshSupport(probe.version).support === 'tested';
    return [{ id: 'dsh-seams', status: tested ? 'ok' : 'warn', title, detail: t(tested ? 'cli.doctor.seams.tested' : 'cli.doctor.seams.unknown', { version }), ...(tested ? {} : { fix: [t('cli.doctor.seams.startOnce', { profile: ctx.profile })] }) }];
  }
  const missing = entry.missing.filter((id) => seamOf(id) !== undefined);
  if (missing.length === 0) return [{ id: 'dsh-seams', status: 'ok', title, detail: t('cli.doctor.seams.ok', { version, when: when(entry.at) }) }];
  const lines: CheckResult[] = [{ id: 'dsh-seams', status: missing.some((id) => ESSENTIAL.has(id)) ? 'fail' : 'warn', title, detail: ctx.text.plural('cli.doctor.seams.missing', missing.length, { version, when: when(entry.at) }) }];
  for (const id of missing) {
    lines.push({ id: `dsh-seam-${id}`, status: ESSENTIAL.has(id) ? 'fail' : 'warn', title: seamOf(id)?.surface ?? id, detail: t(`cli.doctor.seam.${id}` as Parameters<typeof t>[0]) });
  }
  return lines;
};
