import net from 'node:net';
import { createRootLogger } from '../log';
import { Metrics } from '../metrics';
import { UpstreamProbe } from './probe';

describe('UpstreamProbe', () => {
  let server: net.Server;
  let probe: UpstreamProbe | undefined;
  afterEach(async () => {
    probe?.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads an upstream that accepted while the event loop was busy past the timeout as up', async () => {
    server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    // What the probe concluded, in order: 1 up, 0 down, -1 a new capture started.
    const seen: number[] = [];
    const metrics = new Metrics();
    const set = metrics.set.bind(metrics);
    metrics.set = (name, value) => {
      if (name === 'upstream_up') seen.push(value);
      set(name, value);
    };
    const log = createRootLogger('silent');
    probe = new UpstreamProbe(new URL(`http://127.0.0.1:${port}`), 20, log, metrics, () => seen.push(-1));
    probe.start(); // the first probe connects now
    // The agent busy for ten times the probe's timeout (shape work under load, a long GC): the
    // kernel makes the connection meanwhile, and the timeout's timer is due before the loop sees it.
    const busyUntil = Date.now() + 200;
    while (Date.now() < busyUntil);
    await new Promise<void>((resolve) => {
      const check = (): void => void (seen.length === 0 ? setImmediate(check) : resolve());
      check();
    });
    // Never read as down: after it had answered once, down and back again would start a new capture.
    expect(seen).toEqual([1]);
  });
});
