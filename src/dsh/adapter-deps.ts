// What every adapter module is given: the runtime's deps, and the dsh context, plugin row and seam report behind them.
import type { RuntimeDeps } from '../runtime/session/runtime-deps';
import type { HostSeams } from './host-seams';
import type { HostContext } from './ports';
import type { RowConfig } from './row-config';

export interface AdapterDeps extends RuntimeDeps {
  ctx: HostContext;
  settings: RowConfig;
  /** What the running dsh lacks of the surfaces the bundle uses (host-seams.ts); absent in module tests. */
  seams?: HostSeams;
}
