// Where `dida-todo sim` keeps its address: the port and token beside its --data file (so a restart comes back on
// the same address), the last start in the state folder, and the "the simulator at … is not running" advice.
import http from 'node:http';
import path from 'node:path';
import { isDidaError } from '../dida/dida-error';
import { readFileIfExists, writeFileAtomic } from '../store/atomic-file';
import { displayPath } from '../store/paths';
import type { CliText } from './cli-locale';

/** The simulator's port and token, kept beside its data file (mode 0600: it holds the token). */
export interface SavedSimAddress {
  port: number;
  token: string;
}

/** The last simulator started on this machine for these dida-todo files: where it listened and its data file. */
export interface SimRecord {
  baseUrl: string;
  dataFile: string | null;
}

/** `<data file>.address.json`: the port and token a simulator with that data file used last. */
export function addressFileFor(dataFile: string): string {
  return `${path.resolve(dataFile)}.address.json`;
}

/** `<state dir>/simulator.json`. */
export function simRecordFile(stateDir: string): string {
  return path.join(stateDir, 'simulator.json');
}

/** The saved port and token, or undefined when there is none; `problem` says why a file that exists was not used. */
export async function readSavedAddress(file: string): Promise<{ saved?: SavedSimAddress; problem?: string }> {
  let text: string | undefined;
  try {
    text = await readFileIfExists(file);
  } catch (error) {
    return { problem: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
  if (text === undefined) return {};
  try {
    const value = JSON.parse(text) as { port?: unknown; token?: unknown };
    const port = value.port;
    const token = value.token;
    if (typeof port === 'number' && Number.isInteger(port) && port > 0 && port <= 65_535 && typeof token === 'string' && token.trim() !== '') return { saved: { port, token } };
  } catch {
    // Not JSON: reported below like any other unusable content.
  }
  return { problem: 'not a {"port", "token"} object' };
}

export async function writeSavedAddress(file: string, address: SavedSimAddress): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify({ version: 1, port: address.port, token: address.token }, null, 2)}\n`, { mode: 0o600, dirMode: 0o700 });
}

export async function readSimRecord(stateDir: string): Promise<SimRecord | undefined> {
  try {
    const text = await readFileIfExists(simRecordFile(stateDir));
    if (text === undefined) return undefined;
    const value = JSON.parse(text) as { baseUrl?: unknown; dataFile?: unknown };
    if (typeof value.baseUrl !== 'string') return undefined;
    return { baseUrl: value.baseUrl, dataFile: typeof value.dataFile === 'string' ? value.dataFile : null };
  } catch {
    // Only advice depends on it: an unreadable record gives the general advice.
    return undefined;
  }
}

export async function writeSimRecord(stateDir: string, record: SimRecord): Promise<void> {
  await writeFileAtomic(simRecordFile(stateDir), `${JSON.stringify({ version: 1, ...record }, null, 2)}\n`, { mode: 0o600, dirMode: 0o700 });
}

/** Whether `url` names this machine (127.0.0.0/8, localhost, ::1): no real Dida lives there, a simulator does. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** Whether the simulator at 127.0.0.1:`port` answers `token` (one request, at most `timeoutMs`). */
export function simulatorAnswers(port: number, token: string, timeoutMs = 1_500): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/open/v1/project', headers: { Authorization: `Bearer ${token}` }, timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** The simulator command the README gives: its data (lists, tasks, token) kept in a file, so a restart keeps the binding. */
export const SIM_WITH_DATA = 'dida-todo sim --use --data ~/.local/share/dida-todo-sim.json';

/**
 * "The simulator at <url> is not running (start it with …)" for a network failure at a loopback Dida address,
 * else undefined. The command to start it is the one that brings it back on that address when the last simulator
 * started there had a data file (`sim --data <file>`), else `sim --use` (a new address and token, saved).
 */
export async function simulatorDownMessage(error: unknown, baseUrl: string, stateDir: string, text: CliText, home?: string): Promise<string | undefined> {
  if (!isDidaError(error) || error.code !== 'network' || !isLoopbackUrl(baseUrl)) return undefined;
  const record = await readSimRecord(stateDir);
  const same = record !== undefined && record.baseUrl === baseUrl;
  if (same && record.dataFile) {
    return text.t('cli.simDown.sameAddress', { url: baseUrl, command: `dida-todo sim --data ${shellWord(displayPath(record.dataFile, home))}` });
  }
  return text.t('cli.simDown.newAddress', { url: baseUrl, command: SIM_WITH_DATA });
}

/** A path as one shell word (`~/` kept at the front so the shell still expands it). */
function shellWord(file: string): string {
  if (/^[\w@%+=:,./~-]+$/.test(file)) return file;
  const home = file.startsWith('~/') ? '~/' : '';
  return `${home}'${file.slice(home.length).replace(/'/g, `'\\''`)}'`;
}
