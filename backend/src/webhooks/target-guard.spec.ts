import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetch } from 'undici';
import { TargetGuard } from './target-guard';

// Issue 15 (second review): a name is checked as it resolves for each connection (DNS rebinding),
// and cloud metadata names are refused by name, resolvable or not.
describe('TargetGuard', () => {
  it('checks the address each connection resolves to: a name that turns internal on the 2nd lookup is refused then', async () => {
    // Connection: close, so that each delivery opens a connection (and looks the name up) again.
    let received = 0;
    const receiver = http.createServer((_request, response) => {
      received++;
      response.writeHead(204, { connection: 'close' }).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    // The operator allows the receiver's loopback address; the name's 2nd answer is the metadata service.
    // Registration and the first delivery get the first answer, the second delivery the second.
    const answers = ['127.0.0.1', '127.0.0.1', '169.254.169.254'];
    const lookups: string[] = [];
    const guard = new TargetGuard(['127.0.0.1/32'], (hostname, _options, callback) => {
      lookups.push(hostname);
      callback(null, [
        { address: answers[lookups.length - 1] ?? '169.254.169.254', family: 4 } satisfies LookupAddress,
      ]);
    });
    const dispatcher = guard.dispatcher({ connectTimeoutMs: 5_000 });
    try {
      const url = `http://hooks.rebinding.test:${port}/in`;
      expect(await guard.urlRefusal(url)).toBeNull(); // as registered: the first answer
      const first = await fetch(url, { method: 'POST', body: '{}', dispatcher });
      expect(first.status).toBe(204);
      await expect(fetch(url, { method: 'POST', body: '{}', dispatcher })).rejects.toMatchObject({
        cause: {
          code: 'EADDRNOTALLOWED',
          message: expect.stringContaining(
            'hooks.rebinding.test resolves to a link-local address (cloud metadata lives there) (169.254.169.254)',
          ),
        },
      });
      expect(received).toBe(1);
      expect(lookups).toEqual(['hooks.rebinding.test', 'hooks.rebinding.test', 'hooks.rebinding.test']);
    } finally {
      await dispatcher.close();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it.each([
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://METADATA.google.internal./computeMetadata/v1/',
    'http://metadata/computeMetadata/v1/',
    'http://metadata.goog/computeMetadata/v1/',
    'http://instance-data/latest/meta-data/',
    'http://instance-data.ec2.internal/latest/meta-data/',
  ])('refuses %s by name, whether or not the name resolves here', async (url) => {
    // Even where it resolves to a public address, and with every address allowed.
    const guard = new TargetGuard(['0.0.0.0/0'], (_hostname, _options, callback) =>
      callback(null, [{ address: '93.184.215.14', family: 4 }]),
    );
    expect(await guard.urlRefusal(url)).toMatch(/is a cloud metadata name$/);
  });
});
