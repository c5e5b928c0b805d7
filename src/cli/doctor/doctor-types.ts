// The shapes `dida-todo doctor` is built from: a check, its results, and the shared, lazily computed facts.
import type { CliText } from '../cli-locale';
import type { FailureInfo } from '../cli-output';
import type { TokenInfo } from '../cli-runtime';
import type { Endpoint } from '../../wiring/runtime';
import type { DidaGateway } from '../../dida/dida-gateway';
import type { Project } from '../../dida/types';
import type { DidaTodoConfig } from '../../store/config-schema';
import type { DidaTodoPaths } from '../../store/paths';
import type { DshProbe } from './dsh-probe';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** One line of the doctor's report. `fix` holds the commands that fix a problem, one per entry. */
export interface CheckResult {
  /** Stable id for scripts: `node`, `dsh`, `dsh-node`, `pnpm`, `hmr`, `overlay`, `bundle`, `config`, `token`, `binding`, … */
  id: string;
  status: CheckStatus;
  /** Short name of what was checked, in the person's language. */
  title: string;
  /** What was found, one sentence. */
  detail: string;
  fix?: string[];
}

/** The Dida connection as the token check found it (shared by every check that needs Dida). */
export interface DoctorConnection {
  endpoint: Endpoint;
  source?: TokenInfo;
  /** Set when the token worked: a gateway for further reads (the binding check, a live probe). */
  gateway?: DidaGateway;
  projects?: Project[];
  failure?: FailureInfo;
  /** The failure was a simulator at a loopback address that is not running: what to say instead, with its command. */
  simulatorDown?: string;
}

/** Facts the checks share; each is computed once, on first use, so checks can run concurrently. */
export interface DoctorContext {
  text: CliText;
  env: NodeJS.ProcessEnv;
  /** The directory whose binding is checked. */
  dir: string;
  /** The dsh profile the bundle should be in (default `web`). */
  profile: string;
  /** `$DSH_HOME`, else `~/.dsh`, as the person would type it. */
  dshHome: string;
  /** The same folder as a real path (`$HOME/.dsh` expanded). */
  dshHomeDir: string;
  paths: DidaTodoPaths;
  config(): Promise<{ config?: DidaTodoConfig; error?: unknown }>;
  dsh(): Promise<DshProbe>;
  /** Finds the token and reads the list of lists once (GET /project). */
  connection(): Promise<DoctorConnection>;
}

/** A check: reads the context, returns one or more result lines. It never throws (a failure is a result). */
export type DoctorCheck = (ctx: DoctorContext) => Promise<CheckResult[]>;
