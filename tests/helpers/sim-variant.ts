// The simulator behaviour a test run uses: `DIDA_SIM_VARIANT` names a profile of live-service variants (default: none).
import type { SimQuirks } from '../../src/sim/simulator';

export function simQuirksForTests(): Partial<SimQuirks> {
  return {};
}
