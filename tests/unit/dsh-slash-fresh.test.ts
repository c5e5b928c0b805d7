// `/dida`'s words built when src/dsh/slash-commands.ts loads, from a fresh import before each test so a change is
// seen: every subcommand parsed (any case, any spacing before its argument), and the notes of /dida run and resume.
import { beforeEach, describe, expect, it, vi } from 'vitest';

let slash: typeof import('../../src/dsh/slash-commands');
beforeEach(async () => {
  vi.resetModules();
  slash = await import('../../src/dsh/slash-commands');
});

describe('/dida, from a fresh import', () => {
  it.each(['help', 'status', 'queue', 'bind', 'unbind', 'pause', 'resume', 'run'])('parses %s, in any case, with its argument after any spacing', (sub) => {
    expect(slash.parseSlash(sub)).toEqual({ sub, argument: '' });
    expect(slash.parseSlash(`  ${sub.toUpperCase()} \t  工作 清单 `)).toEqual({ sub, argument: '工作 清单' });
  });

  it('an unknown word is named as typed; nothing at all is help', () => {
    expect(slash.parseSlash('Stop now')).toEqual({ unknown: 'Stop' });
    expect(slash.parseSlash('   ')).toEqual({ sub: 'help', argument: '' });
  });

  it('the notes that start a turn for /dida run and /dida resume', () => {
    expect(slash.RUN_NOTE).toBe('[dida-todo] The person asked (with /dida run) to take work from the Dida queue now.');
    expect(slash.RESUME_NOTE).toBe('[dida-todo] The person resumed the current Work (with /dida resume): carry on with it; todo list shows where it stands.');
    expect(slash.SLASH_QUEUE_SHOWN).toBe(30);
  });
});
