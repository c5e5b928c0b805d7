#!/usr/bin/env node
// Runs the install steps of docs/install.md ("The four steps") one by one, as a person on a machine without dsh
// would: a fresh HOME, a PATH with no dsh and no pnpm, real downloads. Then `dida-todo doctor` must pass.
//
//   node scripts/check-install-section.mjs [--keep] [--file docs/install.zh.md]
//   node scripts/check-install-section.mjs --help
//
// --file names the page to run, relative to the repository root (default docs/install.md); the older --readme works
// the same way. --keep leaves the fresh HOME in place to look at.
//
// The section lies between `<!-- install-check:begin -->` and `<!-- install-check:end -->`. Every ```sh block in it
// runs, in order, in one bash (so `cd` carries over), except where the comment right above a block says:
//   <!-- install-check: skip … -->                 not run (it needs a real Dida token; the simulator stands in)
//   <!-- install-check: background -->            started in the background (the simulator), stopped at the end
//   <!-- install-check: node-older-than 22.19 --> run only when this machine's `node` is older than that
// Two stand-ins, both printed: the install spec from package.json (`github:owner/name`) becomes a tarball of this
// clone (`npm pack`), so the check tests this commit, not whatever GitHub serves; and `~/code/my-project` is created.
// Global npm installs go to `$HOME/.local` (npm_config_prefix), so nothing outside the fresh HOME is touched.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const keep = args.includes('--keep');
const fileFlag = ['--file', '--readme'].find((flag) => args.includes(flag));
const pageName = fileFlag ? args[args.indexOf(fileFlag) + 1] : 'docs/install.md';
const STEP_TIMEOUT_MS = Number(process.env.DIDA_TODO_INSTALL_CHECK_TIMEOUT_MS) || 15 * 60_000;

function log(line) {
  process.stderr.write(`[install-check] ${line}\n`);
}

function fail(message) {
  log(`FAILED: ${message}`);
  process.exit(1);
}

/** The install section's steps: `{ code, mode }` with mode run | skip | background | node-old. */
export function installSteps(markdown) {
  const begin = markdown.indexOf('<!-- install-check:begin -->');
  const end = markdown.indexOf('<!-- install-check:end -->');
  if (begin < 0 || end < begin) throw new Error('no <!-- install-check:begin --> … <!-- install-check:end --> section');
  const lines = markdown.slice(begin, end).split('\n');
  const steps = [];
  let marker = 'run';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const note = /^<!-- install-check: (skip|background|node-older-than 22\.19)\b.*-->$/.exec(line);
    if (note) {
      marker = note[1] === 'skip' ? 'skip' : note[1] === 'background' ? 'background' : 'node-old';
      continue;
    }
    if (line === '```sh') {
      const indent = lines[i].indexOf('```');
      const body = [];
      for (i++; i < lines.length && lines[i].trim() !== '```'; i++) body.push(lines[i].slice(indent));
      steps.push({ code: body.join('\n'), mode: marker });
      marker = 'run';
    }
  }
  return steps;
}

function nodeOlderThan(major, minor) {
  const [a, b] = process.versions.node.split('.').map(Number);
  return a < major || (a === major && b < minor);
}

/** PATH without any folder that holds a dsh or a pnpm: a machine that has never seen dsh. */
function cleanPath() {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir && !['dsh', 'pnpm', 'dida-todo'].some((name) => fs.existsSync(path.join(dir, name))))
    .join(path.delimiter);
}

async function main() {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const slug = /github\.com[/:]([\w.-]+\/[\w.-]+?)(?:\.git)?$/.exec(pkg.repository?.url ?? '')?.[1];
  if (!slug) fail('package.json has no GitHub repository');
  const spec = `github:${slug}`;

  if (args.includes('--help')) {
    process.stdout.write('node scripts/check-install-section.mjs [--keep] [--file docs/install.zh.md]\n\nRuns the install steps of a page (default docs/install.md) in a fresh HOME, then `dida-todo doctor`.\n');
    return;
  }
  if (!pageName || pageName.startsWith('--')) fail(`${fileFlag} needs a file`);
  const markdown = fs.readFileSync(path.join(root, pageName), 'utf8');
  const steps = installSteps(markdown);
  if (steps.length === 0) fail(`no sh blocks in the install section of ${pageName}`);
  log(`running the install section of ${pageName}`);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'dida-todo-install-check-'));
  const home = path.join(work, 'home');
  fs.mkdirSync(path.join(home, 'code', 'my-project'), { recursive: true });
  log(`fresh HOME ${home}`);
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root, encoding: 'utf8' }).trim().split('\n').pop();
  const tarballPath = path.join(work, tarball);
  log(`${spec} stands for this clone: ${tarballPath}`);

  const env = {
    HOME: home,
    PATH: [path.join(home, '.local', 'bin'), cleanPath()].join(path.delimiter),
    LANG: process.env.LANG ?? 'C.UTF-8',
    TERM: 'dumb',
    TMPDIR: os.tmpdir(),
    npm_config_prefix: path.join(home, '.local'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    DSH_TELEMETRY_DISABLED: '1',
  };
  // How this machine reaches the network stays as it is (proxies, extra CA certificates, a registry mirror): that is
  // the machine, not an install step.
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(https?_proxy|no_proxy|all_proxy|node_extra_ca_certs|ssl_cert_file|ssl_cert_dir|npm_config_registry|npm_config_cafile)$/i.test(key)) env[key] = value;
  }

  const background = [];
  let script = 'set -euo pipefail\ncd "$HOME"\n';
  steps.forEach((step, index) => {
    const code = step.code.split(spec).join(tarballPath);
    const title = `step ${index + 1} (${step.mode})`;
    if (step.mode === 'skip') {
      log(`${title}: skipped as marked:\n${step.code}`);
      return;
    }
    if (step.mode === 'node-old' && !nodeOlderThan(22, 19)) {
      log(`${title}: not needed, node ${process.versions.node} is new enough`);
      return;
    }
    if (step.mode === 'background') {
      const logFile = path.join(work, `background-${index + 1}.log`);
      background.push(logFile);
      script += `echo '+++ ${title}'\n( ${code} ) > ${JSON.stringify(logFile)} 2>&1 &\necho $! >> ${JSON.stringify(path.join(work, 'background.pids'))}\n`;
      // Ready when the simulator says so (bounded).
      script += `for i in $(seq 1 150); do grep -q 'Ctrl+C' ${JSON.stringify(logFile)} 2>/dev/null && break; sleep 0.2; done\ngrep -q 'Ctrl+C' ${JSON.stringify(logFile)} || { cat ${JSON.stringify(logFile)}; exit 1; }\n`;
      return;
    }
    script += `echo '+++ ${title}'\n${code}\n`;
  });
  // And whatever the section's last step was: the setup it leaves must satisfy the doctor.
  script += "echo '+++ dida-todo doctor'\ndida-todo doctor\n";
  fs.writeFileSync(path.join(work, 'steps.sh'), script);
  log(`running ${path.join(work, 'steps.sh')}`);

  const started = Date.now();
  const child = spawn('bash', [path.join(work, 'steps.sh')], { cwd: home, env, stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  const timer = setTimeout(() => {
    log(`timed out after ${STEP_TIMEOUT_MS / 1000} s`);
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }, STEP_TIMEOUT_MS);
  const code = await new Promise((resolve) => child.on('close', (c, signal) => resolve(c ?? signal)));
  clearTimeout(timer);

  // Stop what the section left running in the background (the simulator): the ids recorded above, and whatever is
  // left in the process group of the bash this script started.
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // The group is already empty.
  }
  const pidFile = path.join(work, 'background.pids');
  for (const pid of fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number) : []) {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
  }

  function size(dir) {
    try {
      return execFileSync('du', ['-sm', dir], { encoding: 'utf8' }).split('\t')[0] + ' MB';
    } catch {
      return '-';
    }
  }
  const sizes = {
    dsh: size(path.join(home, '.local', 'share', 'dsh')),
    pnpmStore: size(path.join(home, '.local', 'share', 'pnpm')),
    npmCache: size(path.join(home, '.npm')),
    dshHome: size(path.join(home, '.dsh')),
    home: size(home),
  };
  log(`sizes: ${JSON.stringify(sizes)}; ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
  else log(`kept ${work}`);
  if (code !== 0) fail(`the install section stopped with ${code}${keep ? '' : ' (run with --keep to look at the fresh HOME)'}`);
  log('passed: every step ran and `dida-todo doctor` is happy');
}

// Runs only as a script (tests import installSteps without running the check).
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
