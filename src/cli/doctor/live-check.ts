// `dida-todo doctor --live`: the live self-test as doctor lines — each behaviour the bundle depends on, matching or not.
import { runLiveProbe } from './live-probe';
import type { CheckResult, DoctorCheck } from './doctor-types';

/**
 * Runs the live self-test in a scratch list of the person's account (created and removed by it) once the token check
 * found a working connection. A behaviour that differs from the simulator is a warning (the engine's suites run under
 * every variant, except a create that loses its sortOrder, whose consequence the line spells out); a step that failed
 * or a scratch list left behind is a failure, and the summary then says the list is still there.
 */
export const liveCheck: DoctorCheck = async (ctx) => {
  const { t } = ctx.text;
  const title = t('cli.doctor.title.live');
  const connection = await ctx.connection();
  if (!connection.gateway) return [{ id: 'live', status: 'skip', title, detail: t('cli.doctor.live.needsToken') }];
  const report = await runLiveProbe(connection.gateway, { locale: ctx.text.id });
  const lines: CheckResult[] = report.observations.map((o) => ({
    id: `live:${o.id}`,
    status: o.matches || o.observed === 'not testable' ? 'ok' : 'warn',
    title,
    detail:
      o.id === 'create-sort-order' && o.observed === 'not kept'
        ? t('cli.doctor.live.sortOrderLost', { observed: o.detail ?? o.observed })
        : t(o.matches ? 'cli.doctor.live.same' : 'cli.doctor.live.different', { what: o.what, observed: o.observed, simulator: o.simulatorDefault }),
  }));
  for (const failure of report.failures) lines.push({ id: 'live:step', status: 'fail', title, detail: t('cli.doctor.live.stepFailed', { step: failure.step, message: failure.message }) });
  if (!report.cleanup.ok) {
    lines.push({ id: 'live:cleanup', status: 'fail', title, detail: t('cli.doctor.live.leftBehind', { what: report.cleanup.leftBehind.join(', '), list: report.listName }) });
  }
  const variants = report.matchingVariants.length ? report.matchingVariants.join(', ') : t('cli.doctor.live.noVariant');
  const summary = !report.cleanup.ok ? 'cli.doctor.live.summaryLeft' : report.listId === undefined ? 'cli.doctor.live.summaryNoList' : 'cli.doctor.live.summary';
  lines.push({ id: 'live:summary', status: report.failures.length || !report.cleanup.ok ? 'warn' : 'ok', title, detail: t(summary, { list: report.listName, variants }) });
  return lines;
};
