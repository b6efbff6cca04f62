// A jest reporter: for each test file, when it ran and whose CPU its time went to, one line each as
// the files end, in the file `SPECTATOR_JEST_TIMELINE` names (jest.config.js adds it when that is
// set; .ci/run sets it and prints the file after the tests).
//
// Why: the same files take 2–4× as long from one quiet CI to the next, and CI runs the images'
// builds and checks and the type-check and lint beside jest at nice 10. A file's wall time alone
// cannot say whether it did more work or waited for a CPU. Per file this gives its wall time, the
// CPU of jest's process tree while it ran (the tests run in jest's process with one worker; the
// backends, agents, PostgreSQL and browsers they start are its descendants), and the machine's CPU
// from /proc/stat: `user+sys` at nice 0 (jest's tree and anything else not niced), `nice` (the
// user time of niced processes: CI's images and checks), `steal` (time the machine's hypervisor gave
// its CPUs to others) and what stayed idle. Linux only: where /proc cannot be read, the machine's
// columns are left empty.
//
// The tree's CPU is jest's own (and its reaped children's) plus each live descendant's, taken at
// the file's start and end: a descendant that outlived a file's start and ended within it is
// counted from its own start (there are few: each file stops what it started).
'use strict';
const fs = require('node:fs');
const os = require('node:os');

/** Clock ticks a second of /proc's CPU times (USER_HZ: 100 on every Linux jest runs on here). */
const HZ = 100;

/** @returns {{busy: number, nice: number, steal: number, idle: number} | undefined} the machine's CPU seconds so far */
function machineCpu() {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is counted in user and nice already)
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields;
    return {
      busy: (user + system + irq + softirq) / HZ,
      nice: nice / HZ,
      steal: steal / HZ,
      idle: (idle + iowait) / HZ,
    };
  } catch {
    return undefined;
  }
}

/** @returns {number} CPU seconds of this process, its reaped children, and its live descendants */
function treeCpu() {
  /** @type {Map<number, number[]>} parent pid -> children */
  const children = new Map();
  /** @type {Map<number, number>} pid -> its CPU seconds with its reaped children's */
  const cpu = new Map();
  let entries;
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so fields count from its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(fields[1]);
    const pid = Number(entry);
    cpu.set(pid, (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / HZ);
    const siblings = children.get(ppid);
    if (siblings) siblings.push(pid);
    else children.set(ppid, [pid]);
  }
  let total = 0;
  const pending = [process.pid];
  while (pending.length > 0) {
    const pid = /** @type {number} */ (pending.pop());
    total += cpu.get(pid) ?? 0;
    pending.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** @param {number} seconds */
const fixed = (seconds) => seconds.toFixed(1);

class TimelineReporter {
  constructor() {
    this.file = process.env.SPECTATOR_JEST_TIMELINE ?? '';
    // Seconds from CI's start when .ci/run says when that was, else from jest's.
    const started = Number(process.env.SPECTATOR_CI_STARTED_AT);
    this.origin = Number.isFinite(started) && started > 0 ? started * 1000 : Date.now();
    /** @type {Map<string, {at: number, own: NodeJS.CpuUsage, tree: number, machine: ReturnType<typeof machineCpu>}>} */
    this.running = new Map();
    /** @type {Record<string, number>} the columns' sums over the files */
    this.sums = { wall: 0, jest: 0, tree: 0, busy: 0, nice: 0, steal: 0, idle: 0 };
    this.files = 0;
  }

  /** @param {string} line */
  write(line) {
    if (this.file !== '') fs.appendFileSync(this.file, `${line}\n`);
  }

  onRunStart() {
    this.write(
      `# per test file: at (s from ${process.env.SPECTATOR_CI_STARTED_AT ? "CI's" : "jest's"} start), wall s, jest's own CPU s, ` +
        `jest's tree CPU s; the machine's (${os.cpus().length} CPUs) user+sys s at nice 0, nice s, steal s, idle s; load at its end`,
    );
    this.write(['at', 'wall', 'jest', 'tree', 'user+sys', 'nice', 'steal', 'idle', 'load', 'file'].join('\t'));
  }

  /** @param {{path: string}} test */
  onTestFileStart(test) {
    this.running.set(test.path, { at: Date.now(), own: process.cpuUsage(), tree: treeCpu(), machine: machineCpu() });
  }

  /** @param {{path: string, context: {config: {rootDir: string}}}} test */
  onTestFileResult(test) {
    const start = this.running.get(test.path);
    if (start === undefined) return;
    this.running.delete(test.path);
    const own = process.cpuUsage(start.own);
    const machine = machineCpu();
    const wall = (Date.now() - start.at) / 1000;
    const jest = (own.user + own.system) / 1e6;
    const tree = treeCpu() - start.tree;
    this.files += 1;
    this.sums.wall += wall;
    this.sums.jest += jest;
    this.sums.tree += tree;
    const delta = (/** @type {'busy' | 'nice' | 'steal' | 'idle'} */ key) => {
      if (!machine || !start.machine) return '';
      this.sums[key] += machine[key] - start.machine[key];
      return fixed(machine[key] - start.machine[key]);
    };
    this.write(
      [
        fixed((start.at - this.origin) / 1000),
        fixed(wall),
        fixed(jest),
        fixed(tree),
        delta('busy'),
        delta('nice'),
        delta('steal'),
        delta('idle'),
        os.loadavg()[0].toFixed(1),
        test.path.startsWith(`${process.cwd()}/`) ? test.path.slice(process.cwd().length + 1) : test.path,
      ].join('\t'),
    );
  }

  onRunComplete() {
    const { wall, jest, tree, busy, nice, steal, idle } = this.sums;
    this.write(
      `# ${this.files} files: wall ${fixed(wall)} s; jest ${fixed(jest)} CPU-s, its tree ${fixed(tree)}; ` +
        `the machine: user+sys ${fixed(busy)}, nice ${fixed(nice)}, steal ${fixed(steal)}, idle ${fixed(idle)} s`,
    );
  }
}

module.exports = TimelineReporter;
