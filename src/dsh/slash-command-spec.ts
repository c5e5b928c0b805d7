// The `/dida` command as dsh's command registry sees it (`ctx.commands`, the web adapter's slash commands): its name,
// discovery text and input hint. Kept free of the engine so the plugin's first load registers it for nothing.
import type { CommandsService, HostContext, SlashInvocation, SlashResult } from './ports';

export const SLASH_COMMAND = 'dida';

const DESCRIPTION = {
  zh: 'dida-todo：状态、队列、绑定、暂停、恢复、领取工作（不经过模型）',
  en: 'dida-todo: status, queue, bind, pause, resume, run the queue (no model tokens)',
} as const;

const HINT = 'status | queue | bind <list> | unbind | pause | resume | run';

/**
 * Registers `/dida` with dsh's command registry when the profile has one (the web profile does; headless, sdk and
 * acp have no command adapter, so nobody can type it there). Registration is at the plugin's first load, because dsh
 * takes no later registrations; `answer` is called for each invocation. A registry that appears later is waited for.
 */
export function registerSlashCommand(
  ctx: HostContext,
  locale: 'zh' | 'en',
  answer: (invocation: SlashInvocation) => Promise<SlashResult>,
  failed: (detail: string) => void = (detail) => process.stderr.write(`[dida-todo] could not register /${SLASH_COMMAND}: ${detail}\n`),
): void {
  const definition = { name: SLASH_COMMAND, description: DESCRIPTION[locale] ?? DESCRIPTION.en, input: { hint: HINT }, handler: answer };
  const register = (commands: CommandsService | undefined) => {
    try {
      commands?.register(definition);
    } catch (error) {
      failed(error instanceof Error ? error.message : String(error));
    }
  };
  if (typeof ctx.inject === 'function') ctx.inject(['commands'], (sub: HostContext) => register(sub.get('commands') as CommandsService | undefined));
  else register(ctx.get('commands') as CommandsService | undefined);
}
