// The bindings of config.yaml as pure rules: which binding a directory falls under, and copies of a config with one
// binding set or removed (directories compared normalized). No file is read here; config-store.ts reads and writes.
import path from 'node:path';
import { normalizeCwd, type Binding, type DidaTodoConfig } from './config-schema';

/**
 * The binding for `cwd`: an exact match, else the deepest bound ancestor directory (by whole path segments),
 * else undefined.
 */
export function findBinding(config: DidaTodoConfig, cwd: string): Binding | undefined {
  const target = normalizeCwd(cwd);
  let best: Binding | undefined;
  let bestLength = -1;
  for (const binding of config.bindings) {
    const bound = normalizeCwd(binding.cwd);
    if (bound === target) return binding;
    const prefix = bound.endsWith(path.sep) ? bound : bound + path.sep;
    if (target.startsWith(prefix) && bound.length > bestLength) {
      best = binding;
      bestLength = bound.length;
    }
  }
  return best;
}

/** A copy of `config` where `binding` (cwd normalized) replaces the binding of the same directory, or is appended. */
export function withBinding(config: DidaTodoConfig, binding: Binding): DidaTodoConfig {
  const normalized: Binding = { ...binding, cwd: normalizeCwd(binding.cwd) };
  const index = config.bindings.findIndex((b) => normalizeCwd(b.cwd) === normalized.cwd);
  const bindings = index >= 0 ? config.bindings.map((b, i) => (i === index ? normalized : b)) : [...config.bindings, normalized];
  return { ...config, bindings };
}

/** A copy of `config` without the binding of exactly `cwd` (ancestors are kept). */
export function withoutBinding(config: DidaTodoConfig, cwd: string): DidaTodoConfig {
  const target = normalizeCwd(cwd);
  return { ...config, bindings: config.bindings.filter((b) => normalizeCwd(b.cwd) !== target) };
}
