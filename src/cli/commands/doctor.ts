// `dida-todo doctor`: checks everything a real setup needs and prints each problem with the command that fixes it.
import { helpText, parseArgs, type FlagSpec } from '../cli-args';
import type { CliIo } from '../cli-io';
import { createStyle, EXIT, printJson, withProgress, type Style } from '../cli-output';
import { CWD_FLAG, globalOptions, GLOBAL_FLAGS, openCliRuntime, stringFlag, targetDir, type CliContext } from '../cli-runtime';
import { afterLabel, displayWidth, padDisplay } from '../terminal-text';
import { DOCTOR_CHECKS } from '../doctor/doctor-checks';
import type { CheckResult, CheckStatus, DoctorCheck } from '../doctor/doctor-types';
import { liveCheck } from '../doctor/live-check';
import { doctorContext, runChecks } from '../doctor/run-doctor';

const FLAGS: Record<string, FlagSpec> = {
  profile: { type: 'string', valueName: 'name', description: 'cli.doctor.flag.profile' },
  live: { type: 'boolean', description: 'cli.doctor.flag.live' },
  ...CWD_FLAG,
  ...GLOBAL_FLAGS,
};

export async function doctorCommand(argv: readonly string[], io: CliIo, ctx: CliContext): Promise<number> {
  const { t } = ctx.text;
  const args = parseArgs(argv, FLAGS, 'doctor', ctx.text);
  if (args.flags.help) {
    io.out(helpText('dida-todo doctor [--profile web] [--cwd dir] [--live]', t('cli.doctor.summary'), FLAGS, ctx.text));
    return EXIT.ok;
  }
  if (args.positionals.length > 0) io.fail(t('cli.common.noArguments', { command: 'doctor', arg: args.positionals[0] as string }));
  const options = globalOptions(args.flags, ctx);
  const profile = stringFlag(args.flags, 'profile', ctx.text) ?? 'web';
  const dir = await targetDir(args.flags, ctx);
  const runtime = openCliRuntime(ctx, options);
  const checks: DoctorCheck[] = [...DOCTOR_CHECKS, ...(args.flags.live ? [liveCheck] : [])];
  const { ctx: doctor, close } = doctorContext({ cli: ctx, runtime, options, dir, profile });
  let results: CheckResult[];
  try {
    results = await withProgress(io, t('cli.doctor.progress'), () => runChecks(checks, doctor), 1500);
  } finally {
    await close();
  }
  const failed = results.filter((r) => r.status === 'fail').length;
  const warned = results.filter((r) => r.status === 'warn').length;
  const exitCode = failed > 0 ? EXIT.failure : EXIT.ok;
  if (options.json) {
    printJson(io, { ok: failed === 0, exitCode, profile, cwd: dir, checks: results.map((r) => ({ ...r, fix: r.fix ?? [] })) });
    return exitCode;
  }
  printReport(io, createStyle(io, ctx.env, false), results, ctx);
  if (failed > 0) io.out(`\n${ctx.text.plural('cli.doctor.problems', failed)}\n`);
  else io.out(`\n${createStyle(io, ctx.env, false).good(t(warned > 0 ? 'cli.doctor.readyWithWarnings' : 'cli.doctor.ready'))}\n`);
  return exitCode;
}

const MARKS: Record<CheckStatus, string> = { ok: '✓', warn: '!', fail: '✗', skip: '–' };

function printReport(io: CliIo, s: Style, results: CheckResult[], ctx: CliContext): void {
  const column = Math.max(...results.map((r) => displayWidth(r.title))) + 2;
  const paint = (status: CheckStatus, text: string) => (status === 'ok' ? s.good(text) : status === 'warn' ? s.warn(text) : status === 'fail' ? s.bad(text) : s.dim(text));
  const label = ctx.text.t('cli.doctor.fix');
  const indent = ' '.repeat(displayWidth(afterLabel(label, '')));
  for (const r of results) {
    io.out(`${paint(r.status, MARKS[r.status])} ${s.bold(padDisplay(r.title, column))}${r.detail}\n`);
    for (const [i, line] of (r.fix ?? []).entries()) io.out(`${' '.repeat(column + 2)}${i === 0 ? `${s.bold(label)}${afterLabel(label, line).slice(label.length)}` : `${indent}${line}`}\n`);
  }
}
